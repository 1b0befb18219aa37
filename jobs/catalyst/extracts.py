# script-version: 2
# Catalyst script (1): writes Shard's data as partitioned VTK files, one set per step it is run on: every block,
# the particles and, when the scene has them, the rigid bodies' frames and the cloth's triangles.
#
# Each call writes OUT/particles_<step>.vtpc (a vtkPartitionedDataSetCollection: one .vtp piece per rank under
# OUT/particles_<step>/), which ParaView opens directly; File > Open the .vtpc files as one time series.  Shard
# decides the steps (`catalyst: {script: jobs/catalyst/extracts.py, every: N}` or `--catalyst`), so the trigger
# here fires on every call.
#   SHARD_CATALYST_OUT  output folder (default: catalyst-out, relative to the working directory)
import os

from paraview import catalyst
from paraview.simple import *

# The simulation's data: Shard's channel "input" (blocks "particles", and "frames" and "surfaces" when there).
shard_input = PVTrivialProducer(registrationName="input")

extractor = CreateExtractor("VTPC", shard_input, registrationName="particles_vtpc")
extractor.Trigger = "TimeStep"
extractor.Trigger.Frequency = 1
extractor.Writer.FileName = "particles_{timestep:06d}.vtpc"

options = catalyst.Options()
options.ExtractsOutputDirectory = os.environ.get("SHARD_CATALYST_OUT", "catalyst-out")
options.GlobalTrigger = "TimeStep"
options.GlobalTrigger.Frequency = 1
