# script-version: 2
# Catalyst script (2): renders the particles coloured by von Mises stress to OUT/von_mises_<step>.png.
#
# The camera is fixed for the whole run: set SHARD_CATALYST_CAMERA, or it is placed once, on the first image, to
# frame the particles as they are then (so later images show the motion, not a camera that follows it).  The
# colour range is the global one (reduced over the ranks) and only grows, so colours mean the same stress in every
# image.  Needs an X server: on a cluster node or in a test, run under
# `xvfb-run -a -s "-screen 0 1280x1024x24 -noreset" mpiexec ...` (docs/insitu.md says why -noreset).
#   SHARD_CATALYST_OUT     output folder (default: catalyst-out)
#   SHARD_CATALYST_CAMERA  "px,py,pz,fx,fy,fz,ux,uy,uz": camera position, focal point, view-up (m)
#   SHARD_CATALYST_SIZE    image size "W,H" in pixels (default 1024,768)
import os

from paraview import catalyst
from paraview.simple import *
from vtkmodules.vtkCommonCore import vtkDoubleArray
from vtkmodules.vtkParallelCore import vtkCommunicator, vtkMultiProcessController

shard_input = PVTrivialProducer(registrationName="input")

width, height = (int(v) for v in os.environ.get("SHARD_CATALYST_SIZE", "1024,768").split(","))
view = CreateView("RenderView")
view.ViewSize = [width, height]
view.UseColorPaletteForBackground = 0
view.Background = [1.0, 1.0, 1.0]
view.OrientationAxesVisibility = 1
view.OrientationAxesLabelColor = [0.0, 0.0, 0.0]
view.CenterAxesVisibility = 0

display = Show(shard_input, view)
display.Representation = "Points"
display.PointSize = 5.0
display.RenderPointsAsSpheres = 1
ColorBy(display, ("POINTS", "von_mises"))
lut = GetColorTransferFunction("von_mises")
lut.ApplyPreset("Cool to Warm", True)
# The range is set in catalyst_execute: automatic rescaling belongs to the GUI's animation, not to Catalyst.
lut.AutomaticRescaleRangeMode = "Never"
display.SetScalarBarVisibility(view, True)
bar = GetScalarBar(lut, view)
bar.Title = "von Mises stress (Pa)"
bar.ComponentTitle = ""
bar.TitleColor = [0.0, 0.0, 0.0]
bar.LabelColor = [0.0, 0.0, 0.0]

camera = os.environ.get("SHARD_CATALYST_CAMERA")
if camera:
    c = [float(v) for v in camera.split(",")]
    view.CameraPosition, view.CameraFocalPoint, view.CameraViewUp = c[0:3], c[3:6], c[6:9]
camera_placed = bool(camera)

png = CreateExtractor("PNG", view, registrationName="von_mises_png")
png.Trigger = "TimeStep"
png.Trigger.Frequency = 1
png.Writer.FileName = "von_mises_{timestep:06d}.png"
png.Writer.ImageResolution = [width, height]

options = catalyst.Options()
options.ExtractsOutputDirectory = os.environ.get("SHARD_CATALYST_OUT", "catalyst-out")
options.GlobalTrigger = "TimeStep"
options.GlobalTrigger.Frequency = 1


seen = [float("inf"), float("-inf")]  # the von Mises range of every image so far


def global_von_mises_range():
    """(min, max) of von_mises over every rank's particles.  ParaView's own data range is this rank's in
    Catalyst, so the ranks reduce it themselves."""
    data = shard_input.GetClientSideObject().GetOutputDataObject(0)
    lo, hi = float("inf"), float("-inf")
    it = data.NewIterator()
    it.InitTraversal()
    while not it.IsDoneWithTraversal():
        values = it.GetCurrentDataObject().GetPointData().GetArray("von_mises")
        if values is not None and values.GetNumberOfTuples() > 0:
            r = values.GetRange(0)
            lo, hi = min(lo, r[0]), max(hi, r[1])
        it.GoToNextItem()
    controller = vtkMultiProcessController.GetGlobalController()
    if controller is not None and controller.GetNumberOfProcesses() > 1:
        mine, out = vtkDoubleArray(), vtkDoubleArray()
        mine.SetNumberOfTuples(2)
        out.SetNumberOfTuples(2)
        mine.SetValue(0, -lo)
        mine.SetValue(1, hi)
        controller.AllReduce(mine, out, vtkCommunicator.MAX_OP)
        lo, hi = -out.GetValue(0), out.GetValue(1)
    return lo, hi


def catalyst_execute(info):
    global camera_placed
    # The colour range only grows (the union of every range seen), so a colour means the same stress in every
    # image.
    shard_input.UpdatePipeline(info.time)
    lo, hi = global_von_mises_range()
    seen[0], seen[1] = min(seen[0], lo), max(seen[1], hi)
    if seen[0] <= seen[1]:
        lut.RescaleTransferFunction(seen[0], seen[1] if seen[1] > seen[0] else seen[0] + 1.0)
    if not camera_placed:
        # z up (gravity points down z in Shard's scenes), seen from the front-right and above; the distance
        # fits the particles of this first image, and the camera never moves again.
        view.CameraFocalPoint = [0.0, 0.0, 0.0]
        view.CameraPosition = [1.0, -1.8, 1.0]
        view.CameraViewUp = [0.0, 0.0, 1.0]
        view.ResetCamera(False)
        camera_placed = True
