# script-version: 2
# Catalyst script (2): renders the particles coloured by von Mises stress to OUT/von_mises_<step>.png.
#
# The camera is fixed for the whole run: set SHARD_CATALYST_CAMERA, or it is placed once, on the first image, to
# frame the particles as they are then (so later images show the motion, not a camera that follows it).  The
# colour range grows to cover every value seen so far, so colours mean the same stress in every image.  Needs an
# X server: on a cluster node or in a test, run under `xvfb-run -a mpiexec ...`.
#   SHARD_CATALYST_OUT     output folder (default: catalyst-out)
#   SHARD_CATALYST_CAMERA  "px,py,pz,fx,fy,fz,ux,uy,uz": camera position, focal point, view-up (m)
#   SHARD_CATALYST_SIZE    image size "W,H" in pixels (default 1024,768)
import os

from paraview import catalyst
from paraview.simple import *

shard_input = PVTrivialProducer(registrationName="input")

width, height = (int(v) for v in os.environ.get("SHARD_CATALYST_SIZE", "1024,768").split(","))
view = CreateView("RenderView")
view.ViewSize = [width, height]
view.UseColorPaletteForBackground = 0
view.Background = [1.0, 1.0, 1.0]
view.OrientationAxesVisibility = 1
view.OrientationAxesLabelColor = [0.0, 0.0, 0.0]

display = Show(shard_input, view)
display.Representation = "Points"
display.PointSize = 5.0
display.RenderPointsAsSpheres = 1
ColorBy(display, ("POINTS", "von_mises"))
lut = GetColorTransferFunction("von_mises")
lut.ApplyPreset("Inferno (matplotlib)", True)
lut.AutomaticRescaleRangeMode = "Grow and update every timestep"
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


def catalyst_execute(info):
    global camera_placed
    if not camera_placed:
        # z up (gravity points down z in Shard's scenes), seen from the front-right and above; the distance
        # fits the particles of this first image, and the camera never moves again.
        view.CameraFocalPoint = [0.0, 0.0, 0.0]
        view.CameraPosition = [1.0, -1.8, 1.0]
        view.CameraViewUp = [0.0, 0.0, 1.0]
        view.ResetCamera(False)
        camera_placed = True
