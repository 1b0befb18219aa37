"""ParaView's readers on Shard's XDMF output (run with pvpython, under xvfb-run for the rendering).

usage: pvpython check_xdmf.py FILE.xmf N_PARTICLES N_TIMES PNG
       pvpython check_xdmf.py --cells CELLS.xmf N_PARTICLES N_TIMES
Checks FILE.xmf with every reader ParaView 5.11 offers for it: XDMFReader (legacy Xdmf2), Xdmf3ReaderS,
Xdmf3ReaderT and the one OpenDataFile picks (what the GUI offers first), each opened by an absolute path, by a
path relative to the output folder's parent and by "./NAME" from inside the folder (the legacy reader also by
the bare NAME; Xdmf3 resolves the HDF5 files of a bare NAME as "NAMEparticles_<step>.h5", a reader bug that no
file can work around without absolute paths).  For each: N_TIMES time steps in increasing order, at the first
and the last one N_PARTICLES points and as many vertex cells (without cells nothing renders), every array
Shard writes with its number of components, global ids 0..N-1, and the same values as the legacy reader.
Each reader runs in a forked child, so a reader that aborts is one FAIL, not the end of the check.  Also the
XDMF 2 rules a reader relies on, checked on the text (Python's xml module), and a rendered picture of the
last step through OpenDataFile's reader (points coloured by von Mises stress) that must not be blank.
When the folder also holds surfaces.xmf (the cells index: triangles over the particles), that is checked as with
--cells, which checks CELLS.xmf alone: its XDMF 2 rules (Triangle grids whose connectivity is (m, 3) rows of
/particles, over the N_PARTICLES points, with the point attributes of particles.xmf when that is there), and
with every reader, absolute and "./NAME": N_TIMES time steps (any number next to FILE.xmf), at the first and
the last N_PARTICLES points, the grid's count of cells, all triangles, every attribute.
Prints PASS/FAIL lines; exits 0 only if every check passed.
"""
import json
import os
import sys
import xml.etree.ElementTree as ET

from paraview import simple as pv
from paraview import servermanager as sm
from vtkmodules.vtkIOImage import vtkPNGReader

cells_only = len(sys.argv) > 1 and sys.argv[1] == "--cells"
if cells_only:
    path, n_expected, times_expected, png = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), None
else:
    path, n_expected, times_expected, png = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    png = os.path.abspath(png)
path = os.path.abspath(path)
folder, name = os.path.dirname(path), os.path.basename(path)
failures = []

# name: components.  stress is written whole (9 components, row by row, XDMF "Tensor"), so every reader shows
# the same symmetric 3x3 tensor.
ARRAYS = {"velocity": 3, "displacement": 3, "stress": 9, "von_mises": 1, "plastic_strain": 1, "damage": 1,
          "inverted": 1, "stretch": 1, "contact": 1, "body": 1, "material": 1, "rank": 1, "global_id": 1}


def check(ok, what):
    print(("PASS: " if ok else "FAIL: ") + what)
    sys.stdout.flush()
    if not ok:
        failures.append(what)


def check_xml():
    """The XDMF 2 structure on the text: what the readers assume, without a reader's leniency."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        check(False, "%s is well-formed XML (%s)" % (name, e))
        return
    problems = []
    if root.tag != "Xdmf" or root.get("Version") not in ("2.0", "3.0"):
        problems.append("root is not <Xdmf Version=2.0|3.0>")
    coll = root.findall("Domain/Grid")
    if len(coll) != 1 or coll[0].get("GridType") != "Collection" or coll[0].get("CollectionType") != "Temporal":
        problems.append("Domain holds not exactly one temporal collection")
        coll = [ET.Element("Grid")]
    grids = coll[0].findall("Grid")
    if len(grids) != times_expected:
        problems.append("%d grids in the collection" % len(grids))
    kinds = {"Scalar": 1, "Vector": 3, "Tensor6": 6, "Tensor": 9}
    times = []
    for g in grids:
        gn = g.get("Name")
        if g.get("GridType", "Uniform") != "Uniform":
            problems.append("%s: not Uniform" % gn)
        t = g.find("Time")
        times.append(float(t.get("Value")) if t is not None and t.get("Value") is not None else None)
        topo, geom = g.find("Topology"), g.find("Geometry")
        if topo is None or (topo.get("TopologyType") or "").lower() != "polyvertex" or \
                topo.get("NumberOfElements") != str(n_expected) or topo.get("NodesPerElement") != "1":
            problems.append("%s: Topology is not Polyvertex of %d one-node elements" % (gn, n_expected))
        items = []
        if topo is not None:
            conn = topo.findall("DataItem")
            if len(conn) != 1:
                problems.append("%s: Polyvertex without its connectivity DataItem (Xdmf3 makes no cells)" % gn)
            items += [("connectivity", d, 1) for d in conn]
        if geom is None or geom.get("GeometryType") != "XYZ" or len(geom.findall("DataItem")) != 1:
            problems.append("%s: Geometry is not XYZ with one DataItem" % gn)
        else:
            items.append(("position", geom.find("DataItem"), 3))
        names = []
        for a in g.findall("Attribute"):
            names.append(a.get("Name"))
            if a.get("Center") != "Node" or a.get("AttributeType") not in kinds or len(a.findall("DataItem")) != 1:
                problems.append("%s/%s: not a Node attribute of a known type with one DataItem" % (gn, names[-1]))
                continue
            items.append((names[-1], a.find("DataItem"), kinds[a.get("AttributeType")]))
        if sorted(names) != sorted(ARRAYS):
            problems.append("%s: attributes %s" % (gn, names))
        for what, d, ncomp in items:
            dims = [int(x) for x in (d.get("Dimensions") or "0").split()]
            want = [n_expected] if ncomp == 1 else [n_expected, ncomp]
            if dims != want and not (ncomp == 1 and dims == [n_expected, 1]):
                problems.append("%s/%s: Dimensions %s, want %s" % (gn, what, dims, want))
            if d.get("Format") != "HDF" or d.get("NumberType", "Float") not in ("Float", "Int", "UInt", "Char",
                                                                                 "UChar") or \
                    d.get("Precision", "4") not in ("1", "2", "4", "8"):
                problems.append("%s/%s: Format/NumberType/Precision" % (gn, what))
            ref = (d.text or "").strip()
            h5, _, dset = ref.partition(":")
            if not dset.startswith("/") or os.path.isabs(h5) or not os.path.isfile(os.path.join(folder, h5)):
                problems.append("%s/%s: '%s' is not FILE:/DATASET with FILE next to the .xmf" % (gn, what, ref))
    if None in times or times != sorted(times) or len(set(times)) != len(times):
        problems.append("Time values missing or not increasing: %s" % times[:6])
    check(not problems, "%s follows the XDMF 2 rules%s" % (name, "" if not problems else
                                                            ": " + "; ".join(problems[:4])))


def leaf(data):
    if data is not None and data.IsA("vtkCompositeDataSet"):
        it = data.NewIterator()
        it.InitTraversal()
        return None if it.IsDoneWithTraversal() else it.GetCurrentDataObject()
    return data


def read(reader_name, file_name):
    """In the child: what one reader sees, as a dict (or a string saying why it saw nothing)."""
    if reader_name == "default":
        r = pv.OpenDataFile(file_name)
        if r is None:
            return "OpenDataFile found no reader"
    elif reader_name == "XDMFReader":
        r = pv.XDMFReader(FileNames=[file_name])
    else:
        r = getattr(pv, reader_name)(FileName=[file_name])
    r.UpdatePipelineInformation()
    out = {"reader": r.GetXMLName(), "times": list(r.TimestepValues) if r.TimestepValues else [], "steps": []}
    for t in out["times"][:1] + out["times"][-1:]:
        r.UpdatePipeline(t)
        data = leaf(sm.Fetch(r))
        step = {"t": t, "points": -1, "cells": -1, "vertices": False, "arrays": {}}
        if data is not None:
            step["points"], step["cells"] = data.GetNumberOfPoints(), data.GetNumberOfCells()
            step["vertices"] = all(data.GetCell(c).GetNumberOfPoints() == 1 for c in range(0, step["cells"], 53))
            pd = data.GetPointData()
            for i in range(pd.GetNumberOfArrays()):
                a = pd.GetArray(i)
                step["arrays"][a.GetName()] = [a.GetNumberOfComponents(), a.GetNumberOfTuples()]
            gid = pd.GetArray("global_id")
            if gid is not None:
                ids = [int(gid.GetValue(i)) for i in range(gid.GetNumberOfTuples())]
                step["ids_ok"] = sorted(ids) == list(range(n_expected))
                # values by global id, sampled, for the comparison between readers
                row = {g: i for i, g in enumerate(ids)}
                sample = {}
                for g in range(0, n_expected, 97):
                    if g not in row:
                        continue
                    vals = {}
                    for nm in ARRAYS:
                        a = pd.GetArray(nm)
                        if a is not None and nm != "global_id":
                            vals[nm] = [a.GetComponent(row[g], k) for k in range(a.GetNumberOfComponents())]
                    p = data.GetPoint(row[g])
                    vals["position"] = list(p)
                    sample[str(g)] = vals
                step["sample"] = sample
        out["steps"].append(step)
    pv.Delete(r)
    return out


def in_child(reader_name, cwd, file_name, fn=None):
    """read() (or fn) in a forked child: a reader that aborts (Xdmf3 throws past VTK on a missing HDF5 file) is a
    FAIL."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        try:
            os.chdir(cwd)
            res = json.dumps((fn or read)(reader_name, file_name))
        except Exception as e:  # noqa: BLE001 - anything the reader raises is a failed check
            res = json.dumps("%s: %s" % (type(e).__name__, e))
        with os.fdopen(wfd, "w") as f:
            f.write(res)
        os._exit(0)
    os.close(wfd)
    with os.fdopen(rfd) as f:
        text = f.read()
    _, status = os.waitpid(pid, 0)
    if not text:
        return "the reader ended the process (wait status %d)" % status
    return json.loads(text)


def check_reader(reader_name, how, cwd, file_name, ref):
    """One PASS/FAIL line for one reader opened one way, naming what was wrong."""
    label = "%s, %s '%s'" % (reader_name, how, file_name)
    res = in_child(reader_name, cwd, file_name)
    if not isinstance(res, dict):
        check(False, "%s: reads the output: %s" % (label, res))
        return None
    if reader_name == "default":
        label = "%s (%s)" % (label, res["reader"])
    legacy = res["reader"] == "XdmfReader"
    problems = []
    times = res["times"]
    if len(times) != times_expected or times != sorted(times):
        problems.append("%d time steps, want %d increasing: %s" % (len(times), times_expected, times[:6]))
    rsteps = {s["t"]: s.get("sample", {}) for s in ref["steps"]} if ref is not None else {}
    for st in res["steps"]:
        t = st["t"]
        if st["points"] != n_expected or st["cells"] != n_expected or not st["vertices"]:
            problems.append("t = %g: %d points, %d cells, want %d points in as many vertex cells"
                            % (t, st["points"], st["cells"], n_expected))
        for nm, nc in ARRAYS.items():
            want = nc
            if st["arrays"].get(nm) != [want, n_expected]:
                problems.append("t = %g: array %s is %s, want %d x %d" % (t, nm, st["arrays"].get(nm), n_expected, want))
        if not st.get("ids_ok", False):
            problems.append("t = %g: global ids are not 0..N-1" % t)
        sample = st.get("sample", {})
        if any(len(v.get("stress", [])) == 9 and any(v["stress"][a] != v["stress"][b]
                          for a, b in ((1, 3), (2, 6), (5, 7))) for v in sample.values()):
            problems.append("t = %g: stress is not a symmetric 3x3 tensor" % t)
        if ref is not None and sample:
            rsample = rsteps.get(t, {})
            diff = []
            for g, vals in sample.items():
                for nm, v in vals.items():
                    r = rsample.get(g, {}).get(nm)
                    if r != v:
                        diff.append("%s of id %s" % (nm, g))
            if diff or len(sample) != len(rsample):
                problems.append("t = %g: values differ from XDMFReader's: %s" % (t, ", ".join(diff[:3])))
    steps = res["steps"]
    check(not problems, "%s: %d time steps, points/cells at the first and last %s, %d arrays (stress %s)%s" % (
        label, len(times), " ".join("%d/%d" % (s["points"], s["cells"]) for s in steps),
        len(steps[0]["arrays"]) if steps else 0, (steps[0]["arrays"].get("stress") or ["none"])[0] if steps else "-",
        "" if not problems else " -- " + "; ".join(problems[:4])))
    return res


def open_reader(reader_name, file_name):
    if reader_name == "default":
        return pv.OpenDataFile(file_name)
    if reader_name == "XDMFReader":
        return pv.XDMFReader(FileNames=[file_name])
    return getattr(pv, reader_name)(FileName=[file_name])


def check_cells_xml(cpath, n_times):
    """The cells index on the text: Triangle grids with their (m, 3) connectivity over the particles' points.
    Returns [(time, m)] per grid and the attributes {name: components} of the first grid."""
    cname = os.path.basename(cpath)
    try:
        root = ET.parse(cpath).getroot()
    except ET.ParseError as e:
        check(False, "%s is well-formed XML (%s)" % (cname, e))
        return [], {}
    problems = []
    coll = root.findall("Domain/Grid")
    if root.tag != "Xdmf" or len(coll) != 1 or coll[0].get("CollectionType") != "Temporal":
        problems.append("not an Xdmf file of one temporal collection")
        coll = [ET.Element("Grid")]
    grids = coll[0].findall("Grid")
    if n_times is not None and len(grids) != n_times:
        problems.append("%d grids in the collection, want %d" % (len(grids), n_times))
    kinds = {"Scalar": 1, "Vector": 3, "Tensor6": 6, "Tensor": 9}
    out, arrays = [], None
    for g in grids:
        gn = g.get("Name")
        t = g.find("Time")
        topo, geom = g.find("Topology"), g.find("Geometry")
        m = int(topo.get("NumberOfElements", "-1")) if topo is not None else -1
        out.append((float(t.get("Value")) if t is not None else None, m))
        if topo is None or topo.get("TopologyType") != "Triangle" or m < 0 or len(topo.findall("DataItem")) != 1:
            problems.append("%s: Topology is not Triangle with NumberOfElements and one DataItem" % gn)
            continue
        items = [("triangles", topo.find("DataItem"), [m, 3])]
        if geom is None or geom.get("GeometryType") != "XYZ" or len(geom.findall("DataItem")) != 1:
            problems.append("%s: Geometry is not XYZ with one DataItem" % gn)
        else:
            items.append(("position", geom.find("DataItem"), [n_expected, 3]))
        names = {}
        for a in g.findall("Attribute"):
            if a.get("Center") != "Node" or a.get("AttributeType") not in kinds or len(a.findall("DataItem")) != 1:
                problems.append("%s/%s: not a Node attribute of a known type" % (gn, a.get("Name")))
                continue
            nc = kinds[a.get("AttributeType")]
            names[a.get("Name")] = nc
            items.append((a.get("Name"), a.find("DataItem"), [n_expected] if nc == 1 else [n_expected, nc]))
        if arrays is None:
            arrays = names
        elif names != arrays:
            problems.append("%s: other attributes than the first grid's" % gn)
        for what, d, want in items:
            dims = [int(x) for x in (d.get("Dimensions") or "0").split()]
            if dims != want:
                problems.append("%s/%s: Dimensions %s, want %s" % (gn, what, dims, want))
            h5, _, dset = (d.text or "").strip().partition(":")
            if d.get("Format") != "HDF" or not dset.startswith("/") or os.path.isabs(h5) or \
                    not os.path.isfile(os.path.join(os.path.dirname(cpath), h5)):
                problems.append("%s/%s: not FILE:/DATASET with FILE next to the .xmf" % (gn, what))
        d = topo.find("DataItem")
        if d.get("NumberType") != "Int" or d.get("Precision") != "8":
            problems.append("%s: connectivity is not Int 8" % gn)
    times = [t for t, _ in out]
    if None in times or times != sorted(times) or len(set(times)) != len(times):
        problems.append("Time values missing or not increasing: %s" % times[:6])
    # the same point arrays as the particles' own index, when it is there
    ppath = os.path.join(os.path.dirname(cpath), "particles.xmf")
    if os.path.isfile(ppath) and grids:
        pg = ET.parse(ppath).getroot().find("Domain/Grid/Grid")
        pnames = sorted(a.get("Name") for a in pg.findall("Attribute")) if pg is not None else []
        if pnames != sorted(arrays or {}):
            problems.append("attributes %s, particles.xmf has %s" % (sorted(arrays or {}), pnames))
    check(not problems, "%s: %d Triangle grids (%s triangles) follow the XDMF 2 rules%s" % (
        cname, len(grids), " ".join(str(m) for _, m in out[:6]),
        "" if not problems else ": " + "; ".join(problems[:4])))
    return out, arrays or {}


def read_cells(reader_name, file_name):
    """In the child: what one reader sees of a cells index, at the first and the last time."""
    r = open_reader(reader_name, file_name)
    if r is None:
        return "OpenDataFile found no reader"
    r.UpdatePipelineInformation()
    out = {"reader": r.GetXMLName(), "times": list(r.TimestepValues) if r.TimestepValues else [], "steps": []}
    for t in out["times"][:1] + out["times"][-1:]:
        r.UpdatePipeline(t)
        data = leaf(sm.Fetch(r))
        step = {"t": t, "points": -1, "cells": -1, "triangles": False, "arrays": {}}
        if data is not None:
            step["points"], step["cells"] = data.GetNumberOfPoints(), data.GetNumberOfCells()
            # VTK_TRIANGLE = 5; every cell, its corners in range
            step["triangles"] = all(data.GetCellType(c) == 5 and data.GetCell(c).GetNumberOfPoints() == 3 and
                                    all(0 <= data.GetCell(c).GetPointId(k) < step["points"] for k in range(3))
                                    for c in range(step["cells"]))
            pd = data.GetPointData()
            for i in range(pd.GetNumberOfArrays()):
                a = pd.GetArray(i)
                step["arrays"][a.GetName()] = [a.GetNumberOfComponents(), a.GetNumberOfTuples()]
        out["steps"].append(step)
    pv.Delete(r)
    return out


def check_cells(cpath, n_times):
    """The cells index with every reader, by its absolute path and as "./NAME" from its folder."""
    grids, arrays = check_cells_xml(cpath, n_times)
    if not grids:
        return
    count = dict(grids)
    cfolder, cname = os.path.dirname(cpath), os.path.basename(cpath)
    for reader_name in ("XDMFReader", "Xdmf3ReaderS", "Xdmf3ReaderT", "default"):
        for how, cwd, file_name in (("absolute path from /", "/", cpath),
                                    ("relative path from the output folder", cfolder, "./" + cname)):
            label = "%s, %s '%s'" % (reader_name, how, file_name)
            res = in_child(reader_name, cwd, file_name, read_cells)
            if not isinstance(res, dict):
                check(False, "%s: reads the cells: %s" % (label, res))
                continue
            problems = []
            if len(res["times"]) != len(grids):
                problems.append("%d time steps, want %d" % (len(res["times"]), len(grids)))
            for st in res["steps"]:
                want = count.get(st["t"], -1)
                if st["points"] != n_expected or st["cells"] != want or not st["triangles"]:
                    problems.append("t = %g: %d points, %d cells, want %d points and %d triangles"
                                    % (st["t"], st["points"], st["cells"], n_expected, want))
                for nm, nc in arrays.items():
                    if st["arrays"].get(nm) != [nc, n_expected]:
                        problems.append("t = %g: array %s is %s" % (st["t"], nm, st["arrays"].get(nm)))
            check(not problems, "%s (%s): %d time steps, points/triangles at the first and last %s%s" % (
                label, res["reader"], len(res["times"]),
                " ".join("%d/%d" % (s["points"], s["cells"]) for s in res["steps"]),
                "" if not problems else " -- " + "; ".join(problems[:4])))


def finish():
    print("%d check(s) failed" % len(failures) if failures else "all checks passed")
    sys.stdout.flush()
    # Leave without tearing the render window down: under Xvfb that teardown can raise an X error (GLXBadContext)
    # that Xlib turns into exit status 1 after every check has passed.
    os._exit(1 if failures else 0)


if cells_only:
    check_cells(path, times_expected)
    finish()
check_xml()
parent = os.path.dirname(folder)
rel = os.path.join(os.path.basename(folder), name)
ref = None
for reader_name in ("XDMFReader", "Xdmf3ReaderS", "Xdmf3ReaderT", "default"):
    ways = [("absolute path from /", "/", path), ("relative path from the parent folder", parent, rel),
            ("relative path from the output folder", folder, "./" + name)]
    if reader_name == "XDMFReader":
        ways.append(("bare name from the output folder", folder, name))
    for how, cwd, file_name in ways:
        res = check_reader(reader_name, how, cwd, file_name, ref)
        if ref is None and reader_name == "XDMFReader" and isinstance(res, dict):
            ref = res

# The picture the GUI user gets: OpenDataFile's reader, points coloured by von Mises stress.
reader = pv.OpenDataFile(path)
reader.UpdatePipelineInformation()
times = list(reader.TimestepValues) if reader.TimestepValues else []
view = pv.CreateRenderView()
view.ViewSize = [400, 300]
view.Background = [1, 1, 1]
try:
    view.UseColorPaletteForBackground = 0
except AttributeError:
    pass
disp = pv.Show(reader, view)
disp.SetRepresentationType("Points")
disp.PointSize = 4
pv.ColorBy(disp, ("POINTS", "von_mises"))
disp.RescaleTransferFunctionToDataRange(True)
view.ViewTime = times[-1] if times else 0.0
view.ResetCamera()
pv.Render(view)
pv.SaveScreenshot(png, view, ImageResolution=[400, 300])
r = vtkPNGReader()
r.SetFileName(png)
r.Update()
img = r.GetOutput()
sc = img.GetPointData().GetScalars()
n = img.GetNumberOfPoints()
nc = sc.GetNumberOfComponents()
bg = tuple(sc.GetComponent(0, k) for k in range(min(3, nc)))
differ = sum(1 for i in range(n) if tuple(sc.GetComponent(i, k) for k in range(min(3, nc))) != bg)
check(differ > 0.005 * n, "%s: rendered %s is not blank (%d of %d pixels differ from the background)"
      % (reader.GetXMLName(), png, differ, n))

# The cloth's triangles, when the run has cloth: as many files as have it, so no count is asked for.
if os.path.isfile(os.path.join(folder, "surfaces.xmf")):
    check_cells(os.path.join(folder, "surfaces.xmf"), None)
finish()
