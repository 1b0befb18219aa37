# script-version: 2
# Catalyst script (3): Catalyst Live.  Each step it runs on, the simulation connects to a ParaView GUI (Catalyst >
# Connect, port 22222) if one is listening, sends it what it asks to extract, and waits while the GUI holds it
# paused.  Without a GUI the run goes on (one failed connection attempt per call).  docs/insitu.md, "Catalyst
# Live", walks through it.
#   SHARD_CATALYST_LIVE_URL  host:port of the GUI (default: localhost:22222; through an ssh tunnel from a
#                            cluster node: `ssh -R 22222:localhost:22222 node`, and keep the default)
import os

from paraview import catalyst
from paraview.simple import *

# Registered so that the GUI lists the simulation's "input" (blocks "particles", later "surfaces" and "frames").
shard_input = PVTrivialProducer(registrationName="input")

options = catalyst.Options()
options.EnableCatalystLive = 1
options.CatalystLiveURL = os.environ.get("SHARD_CATALYST_LIVE_URL", "localhost:22222")
options.CatalystLiveTrigger = "TimeStep"
options.CatalystLiveTrigger.Frequency = 1
options.GlobalTrigger = "TimeStep"
options.GlobalTrigger.Frequency = 1
