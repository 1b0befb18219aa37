"""A headless Catalyst Live client standing in for the ParaView GUI (run with /usr/bin/pvpython; it renders nothing).

usage: pvpython live_client.py PORT PARTICLES [TIMEOUT_S]
Listens on PORT as the GUI's Catalyst > Connect does, extracts the simulation's "input" when the simulation
connects, and exits 0 once an update brings PARTICLES points with the fields of the HDF5 output; exits 1 after
TIMEOUT_S seconds (default 60) without that.  Prints "client: listening" once it accepts connections.
"""
import sys
import time

from paraview import live
from paraview.simple import FindSource

port, particles = int(sys.argv[1]), int(sys.argv[2])
timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 60.0
FIELDS = {"velocity", "displacement", "stress", "von_mises", "plastic_strain", "damage", "inverted", "stretch", "contact",
          "body", "material", "rank", "global_id"}
state = {"ok": False}


def on_connect(link, event):
    print("client: simulation connected", flush=True)
    live.ExtractCatalystData(link, "input")


def on_update(link, event):
    source = FindSource("input")
    data = source.GetClientSideObject().GetOutputDataObject(0) if source else None
    if data is None:
        return
    n = data.GetNumberOfPoints()
    it = data.NewIterator()
    it.InitTraversal()
    names = set()
    while not it.IsDoneWithTraversal():
        pd = it.GetCurrentDataObject().GetPointData()
        names |= {pd.GetArrayName(k) for k in range(pd.GetNumberOfArrays())}
        it.GoToNextItem()
    print("client: update with %d points, arrays %s" % (n, ", ".join(sorted(names))), flush=True)
    if n == particles and FIELDS <= names:
        state["ok"] = True


link = live.ConnectToCatalyst(ds_host="localhost", ds_port=port)
link.AddObserver("ConnectionCreatedEvent", on_connect)
link.AddObserver("UpdateEvent", on_update)
print("client: listening on port %d" % port, flush=True)
deadline = time.time() + timeout
while time.time() < deadline and not state["ok"]:
    live.ProcessServerNotifications()
    time.sleep(0.05)
print("client: %s" % ("received the particles" if state["ok"] else "no complete update before the timeout"), flush=True)
sys.exit(0 if state["ok"] else 1)
