"""Does what docs/insitu.md tells a user to do in the ParaView GUI, headless (run with xvfb-run /usr/bin/pvpython).

usage: pvpython export_state.py SAMPLE.vtpc OUT_SCRIPT EXTRACTS_DIR
Opens a sample extract as the source named "input", colours it by von Mises stress in a render view, adds a CSV
extractor on the data and a PNG extractor on the view, and saves the Catalyst state with the code behind File >
Save Catalyst State (paraview.detail.catalyst_export), extracts going to EXTRACTS_DIR.
"""
import sys

from paraview import servermanager
from paraview.detail import catalyst_export
from paraview.simple import ColorBy, CreateExtractor, CreateView, OpenDataFile, Show

sample, script, extracts = sys.argv[1:4]
source = OpenDataFile(sample, registrationName="input")
view = CreateView("RenderView")
view.ViewSize = [400, 300]
ColorBy(Show(source, view), ("POINTS", "von_mises"))
csv = CreateExtractor("CSV", source, registrationName="csv")
csv.Writer.FileName = "particles_{timestep:06d}.csv"
png = CreateExtractor("PNG", view, registrationName="png")
png.Writer.FileName = "view_{timestep:06d}.png"
options = servermanager._getPyProxy(servermanager.ProxyManager().NewProxy("coprocessing", "CatalystOptions"))
options.ExtractsOutputDirectory = extracts
catalyst_export.save_catalyst_state(script, options.SMProxy)
print("saved", script)
