/* Catalyst module: the only C++ file of Shard and the only one that sees VTK, built as libshard_catalyst.so and
 * loaded by io/insitu.c when a run asks for a script (entry points: io/catalyst_module.h).
 *
 * It owns the ParaView side of in-situ visualisation: one vtkCPProcessor on the run's communicator, one
 * vtkCPPythonPipeline per script (version 2 scripts: paraview.simple + paraview.catalyst), the dataset handed to
 * the channel "input", and the checks that turn a bad script into one clear message agreed on by every rank.  It
 * leaves to the driver which fields exist and how they are computed, to io/insitu.c which steps are due, and to
 * the scripts what is done with the data.  Being loaded into a process that already runs MPI, it calls MPI
 * itself (the communicator comes as a pointer) instead of calling back into shard.
 *
 * The dataset is a vtkPartitionedDataSetCollection built once and re-pointed at the caller's arrays on each
 * call: block "particles" is a vtkPolyData (points + one vertex cell each) whose point arrays wrap the particle
 * store without copying (vtkAOSDataArrayTemplate::SetArray with save = 1: VTK never frees or writes them), one
 * array per column the driver hands over (the output fields of shard/fields.h, by name, type and component
 * count).  The driver's global arrays (statistics of the whole run, the same on every rank) are copied into the
 * polydata's field data instead: they are small, and a copy outlives the driver's buffers.  The per-particle
 * memory of our own, all grow-only: an index ramp 0, 1, 2, ... that serves both as
 * the vertex cells' connectivity and their offsets, and a constant "rank" array for callers that pass no rank
 * column.  A data assembly names the blocks so that "frames" and "surfaces" are appended, at the first execution that
 * has them, without breaking scripts that select by name.  Block "frames" (a few points on rank 0) is copied;
 * block "surfaces" wraps the driver's arrays like "particles" (points, columns, and the triangles' connectivity,
 * whose offsets 0, 3, 6, ... are ours), because a cloth may have as many vertices as a solid has particles.
 *
 * Script errors: ParaView imports a version 2 script at its first execution, not when the pipeline is created
 * (the script may build its pipeline at import and needs data for that), so create() cannot import it.  It checks
 * what can be checked without data (the file is there on every rank; rank 0 compiles a .py file, which catches
 * syntax errors with their line), and execute() captures Python's stderr while the scripts run so that a failure
 * is reported once, by the lowest failing rank, instead of as one traceback per rank.  Every decision that could
 * differ between ranks is agreed with one reduction before any rank acts on it, so no rank is left waiting in a
 * ParaView collective.
 */
#include <vtkPython.h> // Python.h must come before the system headers

#include <mpi.h>

#include <vtkCPDataDescription.h>
#include <vtkCPInputDataDescription.h>
#include <vtkCPProcessor.h>
#include <vtkCPPythonPipeline.h>
#include <vtkCellArray.h>
#include <vtkCompositeDataSet.h>
#include <vtkDataAssembly.h>
#include <vtkDoubleArray.h>
#include <vtkFieldData.h>
#include <vtkIdTypeArray.h>
#include <vtkInformation.h>
#include <vtkIntArray.h>
#include <vtkUnsignedCharArray.h>
#include <vtkUnsignedIntArray.h>
#include <vtkLogger.h>
#include <vtkMPI.h>
#include <vtkNew.h>
#include <vtkPartitionedDataSetCollection.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPythonInterpreter.h>
#include <vtkSmartPointer.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "catalyst_module.h"

static_assert(sizeof(vtkIdType) == sizeof(int64_t), "global ids are handed to VTK without copying");
static_assert(sizeof(int) == sizeof(int32_t), "int32 columns are handed to VTK as vtkIntArray");

namespace
{
/* Python helpers run inside ParaView's interpreter: a syntax check that returns the message instead of
 * printing it, and a redirection of sys.stderr around the scripts' execution. */
const char *const shard_catalyst_python_helpers = R"(
import io, sys

def check_syntax(path):
    try:
        with open(path, 'rb') as f:
            compile(f.read(), path, 'exec')
    except SyntaxError as e:
        where = 'line %s' % e.lineno if e.lineno else 'unknown line'
        if e.offset:
            where += ', column %s' % e.offset
        return 'SyntaxError at %s: %s' % (where, e.msg)
    except Exception as e:
        return '%s: %s' % (type(e).__name__, e)
    return ''

def set_paraview_log_level(level):
    import logging, paraview
    logging.getLogger('paraview').setLevel(level)

_saved_stderr = []

def capture_begin():
    _saved_stderr.append(sys.stderr)
    sys.stderr = io.StringIO()

def capture_end():
    text = sys.stderr.getvalue()
    sys.stderr = _saved_stderr.pop()
    return text
)";

struct shard_catalyst_script
{
    std::string path;
    vtkSmartPointer<vtkCPPythonPipeline> pipeline;
};
} // namespace

struct shard_catalyst
{
    MPI_Comm comm;
    int rank, size;
    std::vector<shard_catalyst_script> scripts;
    vtkSmartPointer<vtkCPProcessor> processor;
    vtkSmartPointer<vtkCPDataDescription> description;
    vtkSmartPointer<vtkPartitionedDataSetCollection> collection;
    vtkSmartPointer<vtkPolyData> particles;
    vtkSmartPointer<vtkPolyData> rigid; /* block "frames", made at the first execution with frames */
    vtkSmartPointer<vtkPolyData> cloth; /* block "surfaces", made at the first execution with cells */
    vtkSmartPointer<vtkDoubleArray> coords;
    vtkSmartPointer<vtkIdTypeArray> offsets, connectivity;
    /* One VTK array per column name seen so far (the driver hands the same list on every rank and step), and
     * our own "rank" for callers that do not pass one. */
    std::vector<std::string> names;
    std::vector<vtkSmartPointer<vtkDataArray>> arrays;
    vtkSmartPointer<vtkIntArray> rank_array;
    std::vector<std::string> global_names; /* field-data arrays of the last execution (replaced at the next) */
    std::vector<vtkIdType> ramp;  /* 0, 1, 2, ...: vertex-cell offsets and connectivity (grow-only) */
    std::vector<int> rank_values; /* this rank, once per particle (grow-only) */
    /* Block "surfaces" has its own of each of the above: a name such as "velocity" is a column of both blocks,
     * with different lengths. */
    vtkSmartPointer<vtkDoubleArray> cloth_coords;
    vtkSmartPointer<vtkIdTypeArray> cloth_offsets, cloth_connectivity;
    std::vector<std::string> cloth_names;
    std::vector<vtkSmartPointer<vtkDataArray>> cloth_arrays;
    vtkSmartPointer<vtkIntArray> cloth_rank_array;
    std::vector<vtkIdType> cloth_ramp;  /* 0, 3, 6, ...: the triangles' offsets (grow-only) */
    std::vector<int> cloth_rank_values; /* this rank, once per cell point (grow-only) */
    PyObject *python;             /* the helpers' namespace (a dict, owned) */
};

/* MPI failures inside the module cannot be shared with the other ranks: report and abort, as shard does. */
static void shard_catalyst_mpi(MPI_Comm comm, int rc, const char *call)
{
    if (rc == MPI_SUCCESS)
        return;
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    MPI_Error_string(rc, s, &n);
    std::fprintf(stderr, "shard: error: Catalyst: %s failed: %s\n", call, s);
    std::fflush(stderr);
    MPI_Abort(comm, SHARD_EXIT_INTERNAL);
}

static int shard_catalyst_error(shard_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int shard_catalyst_error(shard_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
    return code;
}

/* Makes a local verdict global: every rank learns the lowest rank with err->code != 0 (or -1 when none) and
 * receives that rank's record.  One allreduce, one broadcast when something failed.  Collective. */
static int shard_catalyst_agree(MPI_Comm comm, int rank, int size, shard_error *err)
{
    int mine = err->code ? rank : size, first = size;
    shard_catalyst_mpi(comm, MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
    if (first == size)
        return -1;
    shard_catalyst_mpi(comm, MPI_Bcast(err, static_cast<int>(sizeof *err), MPI_BYTE, first, comm), "MPI_Bcast");
    return first;
}

/* Calls one helper with an optional string argument; returns its str() result ("" for None or a failure,
 * which the helper itself prevents). */
static std::string shard_catalyst_python_call(shard_catalyst *h, const char *fn, const char *arg)
{
    vtkPythonScopeGilEnsurer gil;
    PyObject *f = PyDict_GetItemString(h->python, fn); /* borrowed */
    PyObject *r = f ? (arg ? PyObject_CallFunction(f, "s", arg) : PyObject_CallNoArgs(f)) : nullptr;
    std::string out;
    if (r && PyUnicode_Check(r)) {
        const char *s = PyUnicode_AsUTF8(r);
        if (s)
            out = s;
    }
    if (!r)
        PyErr_Clear();
    Py_XDECREF(r);
    return out;
}

/* Warnings and errors are what the user of a running simulation wants from ParaView;
 * SHARD_CATALYST_VERBOSITY (ERROR, WARNING, INFO, TRACE, 0-9) asks for more or less. */
static vtkLogger::Verbosity shard_catalyst_verbosity(void)
{
    const char *v = std::getenv("SHARD_CATALYST_VERBOSITY");
    return v && v[0] ? vtkLogger::ConvertToVerbosity(v) : vtkLogger::VERBOSITY_WARNING;
}

static bool shard_catalyst_python_start(shard_catalyst *h)
{
    vtkLogger::SetStderrVerbosity(shard_catalyst_verbosity());
    /* initsigs = 0: Python must not take SIGINT from the simulation (Ctrl-C has to stop a running shard). */
    vtkPythonInterpreter::Initialize(0);
    vtkPythonScopeGilEnsurer gil;
    h->python = PyDict_New();
    if (!h->python)
        return false;
    PyDict_SetItemString(h->python, "__builtins__", PyEval_GetBuiltins());
    PyObject *r = PyRun_String(shard_catalyst_python_helpers, Py_file_input, h->python, h->python);
    if (!r) {
        PyErr_Print();
        return false;
    }
    Py_DECREF(r);
    return true;
}

/* Text of the last non-empty line of a traceback ("NameError: name 'x' is not defined"). */
static std::string shard_catalyst_last_line(const std::string &text)
{
    size_t end = text.find_last_not_of(" \t\r\n");
    if (end == std::string::npos)
        return std::string();
    size_t start = text.find_last_of('\n', end);
    start = start == std::string::npos ? 0 : start + 1;
    return text.substr(start, end - start + 1);
}

/* A partition's polydata whose points are the array `coords` (3 components, "position"), with vertex cells (the
 * particles) or polygons (the cloth) to be bound to `offsets` and `connectivity`, and the "rank" array; arrays
 * without data yet. */
static vtkSmartPointer<vtkPolyData> shard_catalyst_new_poly(vtkSmartPointer<vtkDoubleArray> &coords,
                                                            vtkSmartPointer<vtkIdTypeArray> &offsets,
                                                            vtkSmartPointer<vtkIdTypeArray> &connectivity,
                                                            vtkSmartPointer<vtkIntArray> &rank, bool polys)
{
    vtkSmartPointer<vtkPolyData> mesh = vtkSmartPointer<vtkPolyData>::New();
    coords = vtkSmartPointer<vtkDoubleArray>::New();
    coords->SetNumberOfComponents(3);
    coords->SetName("position");
    vtkNew<vtkPoints> points;
    points->SetData(coords);
    mesh->SetPoints(points);
    offsets = vtkSmartPointer<vtkIdTypeArray>::New();
    connectivity = vtkSmartPointer<vtkIdTypeArray>::New();
    vtkNew<vtkCellArray> cells;
    if (polys)
        mesh->SetPolys(cells);
    else
        mesh->SetVerts(cells);
    rank = vtkSmartPointer<vtkIntArray>::New();
    rank->SetNumberOfComponents(1);
    rank->SetName("rank");
    return mesh;
}

/* The dataset skeleton: collection -> "particles" -> this rank's polydata, arrays without data yet. */
static void shard_catalyst_build_dataset(shard_catalyst *h)
{
    h->particles = shard_catalyst_new_poly(h->coords, h->offsets, h->connectivity, h->rank_array, false);

    h->collection = vtkSmartPointer<vtkPartitionedDataSetCollection>::New();
    h->collection->SetNumberOfPartitionedDataSets(1);
    h->collection->SetPartition(0, 0, h->particles);
    h->collection->GetMetaData(0u)->Set(vtkCompositeDataSet::NAME(), "particles");
    vtkNew<vtkDataAssembly> assembly;
    assembly->SetRootNodeName("shard");
    assembly->AddDataSetIndex(assembly->AddNode("particles"), 0);
    h->collection->SetDataAssembly(assembly);
}

/* Points `a` at n tuples of caller memory without copying, or empties it. */
template <typename T>
static void shard_catalyst_wrap(vtkDataArray *a, const T *data, size_t n)
{
    using Array = vtkAOSDataArrayTemplate<T>;
    Array *typed = static_cast<Array *>(a);
    int ncomp = a->GetNumberOfComponents();
    if (n == 0 || !data) {
        typed->Initialize();
        typed->SetNumberOfComponents(ncomp);
    } else {
        /* save = 1: the memory stays the caller's; VTK reads it during execute only. */
        typed->SetArray(const_cast<T *>(data), static_cast<vtkIdType>(n) * ncomp, 1);
    }
    a->Modified();
}

/* The VTK array for a column of one block (its names and arrays): one per name, created at its first appearance
 * with the column's element type and component count (a 9-component column is a tensor, its components named as
 * VTK names them). */
static vtkDataArray *shard_catalyst_array(std::vector<std::string> &names,
                                          std::vector<vtkSmartPointer<vtkDataArray>> &arrays, const shard_column *col)
{
    for (size_t k = 0; k < names.size(); k++)
        if (names[k] == col->name)
            return arrays[k];
    vtkSmartPointer<vtkDataArray> a;
    switch (col->type) {
    case SHARD_TYPE_I64:
        a = vtkSmartPointer<vtkIdTypeArray>::New();
        break;
    case SHARD_TYPE_I32:
        a = vtkSmartPointer<vtkIntArray>::New();
        break;
    case SHARD_TYPE_U32:
        a = vtkSmartPointer<vtkUnsignedIntArray>::New();
        break;
    case SHARD_TYPE_U8:
        a = vtkSmartPointer<vtkUnsignedCharArray>::New();
        break;
    case SHARD_TYPE_F64:
    default:
        a = vtkSmartPointer<vtkDoubleArray>::New();
        break;
    }
    a->SetNumberOfComponents(col->ncomp);
    a->SetName(col->name);
    if (col->ncomp == 9) {
        static const char *const tensor[9] = {"XX", "XY", "XZ", "YX", "YY", "YZ", "ZX", "ZY", "ZZ"};
        for (int j = 0; j < 9; j++)
            a->SetComponentName(j, tensor[j]);
    }
    names.push_back(col->name);
    arrays.push_back(a);
    return a;
}

/* Points an array at a column's n tuples without copying, by its element type. */
static void shard_catalyst_wrap_column(vtkDataArray *a, const shard_column *col, size_t n)
{
    switch (col->type) {
    case SHARD_TYPE_I64:
        shard_catalyst_wrap<vtkIdType>(a, static_cast<const vtkIdType *>(col->data), n);
        break;
    case SHARD_TYPE_I32:
        shard_catalyst_wrap<int>(a, static_cast<const int *>(col->data), n);
        break;
    case SHARD_TYPE_U32:
        shard_catalyst_wrap<unsigned int>(a, static_cast<const unsigned int *>(col->data), n);
        break;
    case SHARD_TYPE_U8:
        shard_catalyst_wrap<unsigned char>(a, static_cast<const unsigned char *>(col->data), n);
        break;
    case SHARD_TYPE_F64:
        shard_catalyst_wrap<double>(a, static_cast<const double *>(col->data), n);
        break;
    }
}

/* The bit of the cloth's column mask (shard_catalyst_present) that says every rank's triangles are sound. */
static constexpr int SHARD_CATALYST_CELLS_OK = 63;

/* The first of this rank's triangles with a vertex that is not one of its cell points, or n_cells when all are
 * sound.  VTK filters read such a triangle out of bounds, so it must never reach a script. Local. */
static size_t shard_catalyst_bad_cell(const shard_insitu_fields *f)
{
    int64_t n = f->cell_position ? static_cast<int64_t>(f->n_cell_points) : 0;
    if (!f->cells)
        return 0;
    for (size_t t = 0; t < f->n_cells; t++)
        for (int j = 0; j < 3; j++)
            if (f->cells[3 * t + j] < 0 || f->cells[3 * t + j] >= n)
                return t;
    return f->n_cells;
}

/* Which columns the dataset carries at this step: present[0] for block "particles", those that every rank with
 * particles passes with data; present[1] likewise for block "surfaces" among the ranks with cell points, plus bit
 * SHARD_CATALYST_CELLS_OK.  Agreed with one allreduce (for both blocks) so that all partitions share one array
 * layout (parallel writers and colour maps expect that) even when a rank has no particles and its pointers mean
 * nothing.  Collective. */
static void shard_catalyst_present(shard_catalyst *h, const shard_insitu_fields *f, uint64_t present[2])
{
    uint64_t mine[2] = {~UINT64_C(0), ~UINT64_C(0)};
    if (f->position && f->n > 0)
        for (int k = 0; k < f->n_cols && k < 64; k++)
            if (!f->cols[k].data)
                mine[0] &= ~(UINT64_C(1) << k);
    if (f->has_cells) {
        if (f->cell_position && f->n_cell_points > 0)
            for (int k = 0; k < f->n_cell_cols && k < 16; k++)
                if (!f->cell_cols[k].data)
                    mine[1] &= ~(UINT64_C(1) << k);
        if (shard_catalyst_bad_cell(f) < f->n_cells)
            mine[1] &= ~(UINT64_C(1) << SHARD_CATALYST_CELLS_OK);
    }
    shard_catalyst_mpi(h->comm, MPI_Allreduce(mine, present, 2, MPI_UINT64_T, MPI_BAND, h->comm), "MPI_Allreduce");
}

/* The globals of this step into the field data of this rank's partition, copied (a few hundred values at most),
 * in place of the last step's.  Field data that is not ours (Catalyst's TimeValue, say) stays. Local. */
static void shard_catalyst_bind_globals(shard_catalyst *h, const shard_insitu_fields *f)
{
    vtkFieldData *fd = h->particles->GetFieldData();
    for (const std::string &name : h->global_names)
        fd->RemoveArray(name.c_str());
    h->global_names.clear();
    for (int k = 0; k < f->n_globals; k++) {
        const shard_insitu_global *g = &f->globals[k];
        if (!g->name || !g->name[0])
            continue;
        fd->RemoveArray(g->name); /* the last of two globals of one name wins */
        vtkNew<vtkDoubleArray> a;
        a->SetName(g->name);
        a->SetNumberOfComponents(1);
        a->SetNumberOfTuples(static_cast<vtkIdType>(g->n));
        if (g->n > 0 && g->values)
            std::memcpy(a->GetPointer(0), g->values, g->n * sizeof(double));
        else if (g->n > 0)
            a->Fill(std::numeric_limits<double>::quiet_NaN());
        fd->AddArray(a);
        h->global_names.push_back(g->name);
    }
    fd->Modified();
}


/* The point arrays of a partition from n_cols columns of n rows (present: bit k when column k is used): last
 * step's arrays go first, so this step's columns decide what it carries; "global_id" becomes the GlobalIds, and
 * "rank" is added (rank_values, this rank n times) when no column gives it. */
static void shard_catalyst_bind_columns(vtkPointData *pd, std::vector<std::string> &names,
                                        std::vector<vtkSmartPointer<vtkDataArray>> &arrays, int n_cols,
                                        const shard_column *cols, uint64_t present, vtkIdType n,
                                        vtkSmartPointer<vtkIntArray> &rank_array, std::vector<int> &rank_values)
{
    pd->SetGlobalIds(nullptr);
    for (const std::string &name : names)
        pd->RemoveArray(name.c_str());
    pd->RemoveArray("rank");
    bool has_rank = false;
    for (int k = 0; k < n_cols; k++) {
        const shard_column *col = &cols[k];
        if (std::strcmp(col->name, "position") == 0 || !(present >> k & 1u))
            continue;
        vtkDataArray *a = shard_catalyst_array(names, arrays, col);
        shard_catalyst_wrap_column(a, col, n);
        has_rank |= std::strcmp(col->name, "rank") == 0;
        if (std::strcmp(col->name, "global_id") == 0)
            pd->SetGlobalIds(a);
        else
            pd->AddArray(a);
    }
    if (!has_rank) {
        shard_catalyst_wrap<int>(rank_array, rank_values.data(), n);
        pd->AddArray(rank_array);
    }
}

/* Re-points the dataset at this step's arrays.  Local; allocates only when n exceeds every earlier n. */
static void shard_catalyst_bind(shard_catalyst *h, const shard_insitu_fields *f, uint64_t present)
{
    size_t n = f->position ? f->n : 0;
    if (h->ramp.size() < n + 1) {
        size_t old = h->ramp.size();
        h->ramp.resize(n + 1);
        for (size_t i = old; i < n + 1; i++)
            h->ramp[i] = static_cast<vtkIdType>(i);
        h->rank_values.assign(n + 1, h->rank);
    }
    shard_catalyst_wrap<double>(h->coords, f->position, n);
    h->particles->GetPoints()->Modified();
    /* The ramp serves as both arrays: offsets 0..n and connectivity 0..n-1 give one vertex per point. */
    shard_catalyst_wrap<vtkIdType>(h->offsets, h->ramp.data(), n + 1);
    shard_catalyst_wrap<vtkIdType>(h->connectivity, h->ramp.data(), n);
    h->particles->GetVerts()->SetData(h->offsets, h->connectivity);

    vtkPointData *pd = h->particles->GetPointData();
    /* Arrays of the last step go first: this step's columns decide what the dataset carries. */
    shard_catalyst_bind_columns(pd, h->names, h->arrays, f->n_cols < 64 ? f->n_cols : 64, f->cols, present,
                                static_cast<vtkIdType>(n), h->rank_array, h->rank_values);
    shard_catalyst_bind_globals(h, f);
    h->particles->Modified();
    h->collection->Modified();
}

/* Block "frames": the frames as points with their columns, copied (one point per rigid body, on rank 0). Local
 * (has_frames is the same on every rank, so every rank adds the block at the same execution). */
static void shard_catalyst_bind_frames(shard_catalyst *h, const shard_insitu_fields *f)
{
    if (!f->has_frames)
        return;
    if (!h->rigid) {
        h->rigid = vtkSmartPointer<vtkPolyData>::New();
        unsigned int at = h->collection->GetNumberOfPartitionedDataSets();
        h->collection->SetNumberOfPartitionedDataSets(at + 1);
        h->collection->SetPartition(at, 0, h->rigid);
        h->collection->GetMetaData(at)->Set(vtkCompositeDataSet::NAME(), "frames");
        vtkDataAssembly *assembly = h->collection->GetDataAssembly();
        assembly->AddDataSetIndex(assembly->AddNode("frames"), at);
    }
    vtkIdType n = f->frame_position ? static_cast<vtkIdType>(f->n_frames) : 0;
    vtkNew<vtkPoints> points;
    points->SetDataTypeToDouble();
    points->SetNumberOfPoints(n);
    for (vtkIdType i = 0; i < n; i++)
        points->SetPoint(i, f->frame_position + 3 * i);
    vtkNew<vtkCellArray> verts;
    for (vtkIdType i = 0; i < n; i++)
        verts->InsertNextCell(1, &i);
    h->rigid->Initialize();
    h->rigid->SetPoints(points);
    h->rigid->SetVerts(verts);
    vtkPointData *pd = h->rigid->GetPointData();
    for (int k = 0; k < f->n_frame_cols && k < 16; k++) {
        const shard_column *col = &f->frame_cols[k];
        if (std::strcmp(col->name, "position") == 0 || std::strcmp(col->name, "index") == 0)
            continue;
        vtkSmartPointer<vtkDataArray> a;
        if (col->type == SHARD_TYPE_F64)
            a = vtkSmartPointer<vtkDoubleArray>::New();
        else
            a = vtkSmartPointer<vtkIntArray>::New();
        a->SetName(col->name);
        a->SetNumberOfComponents(col->ncomp);
        a->SetNumberOfTuples(n);
        for (vtkIdType i = 0; i < n && col->data; i++)
            for (int c = 0; c < col->ncomp; c++) {
                size_t at = static_cast<size_t>(i) * static_cast<size_t>(col->ncomp) + static_cast<size_t>(c);
                double v = col->type == SHARD_TYPE_F64 ? static_cast<const double *>(col->data)[at]
                         : col->type == SHARD_TYPE_I64 ? static_cast<double>(static_cast<const int64_t *>(col->data)[at])
                                                       : static_cast<double>(static_cast<const int32_t *>(col->data)[at]);
                a->SetComponent(i, c, v);
            }
        pd->AddArray(a);
    }
    h->rigid->Modified();
    h->collection->Modified();
}

/* Block "surfaces": this rank's triangles over its cell points, wrapped without copying as the particles are, with
 * the columns that `present` keeps.  Made at the first execution with cells (has_cells is the same on every rank,
 * so every rank adds the block at the same execution, after "frames" when both come together).  An execution
 * without cells leaves the block in place, empty: its indices stay, and no array keeps pointing at the driver's
 * memory of an earlier step.  Returns 0, or SHARD_EXIT_INTERNAL with the same *err on every rank (one broadcast)
 * when some rank's triangles use points it does not pass; the block is then empty.  Collective only then. */
static int shard_catalyst_bind_cells(shard_catalyst *h, const shard_insitu_fields *f, uint64_t present,
                                     shard_error *err)
{
    if (!h->cloth && !f->has_cells)
        return 0;
    if (!h->cloth) {
        h->cloth = shard_catalyst_new_poly(h->cloth_coords, h->cloth_offsets, h->cloth_connectivity,
                                           h->cloth_rank_array, true);
        unsigned int at = h->collection->GetNumberOfPartitionedDataSets();
        h->collection->SetNumberOfPartitionedDataSets(at + 1);
        h->collection->SetPartition(at, 0, h->cloth);
        h->collection->GetMetaData(at)->Set(vtkCompositeDataSet::NAME(), "surfaces");
        vtkDataAssembly *assembly = h->collection->GetDataAssembly();
        assembly->AddDataSetIndex(assembly->AddNode("surfaces"), at);
    }
    bool sound = present >> SHARD_CATALYST_CELLS_OK & 1u;
    if (f->has_cells && !sound) {
        size_t bad = shard_catalyst_bad_cell(f);
        if (bad < f->n_cells)
            shard_catalyst_error(err, SHARD_EXIT_INTERNAL,
                                 "Catalyst: block \"surfaces\" on rank %d: triangle %zu of %zu has a vertex that is "
                                 "not one of the rank's %zu cell points",
                                 h->rank, bad, f->n_cells, f->cell_position ? f->n_cell_points : size_t{0});
        shard_catalyst_agree(h->comm, h->rank, h->size, err);
    }
    bool use = f->has_cells && sound;
    size_t n = use && f->cell_position ? f->n_cell_points : 0;
    size_t m = use && f->cells ? f->n_cells : 0;
    if (h->cloth_ramp.size() < m + 1) {
        size_t old = h->cloth_ramp.size();
        h->cloth_ramp.resize(m + 1);
        for (size_t i = old; i < m + 1; i++)
            h->cloth_ramp[i] = 3 * static_cast<vtkIdType>(i);
    }
    if (h->cloth_rank_values.size() < n + 1)
        h->cloth_rank_values.assign(n + 1, h->rank);
    shard_catalyst_wrap<double>(h->cloth_coords, f->cell_position, n);
    h->cloth->GetPoints()->Modified();
    /* Offsets 0, 3, ..., 3m (m + 1 values, so an empty partition still has its leading 0); the driver's indices
     * are the connectivity as they are (int64_t is vtkIdType's size: static_assert above). */
    shard_catalyst_wrap<vtkIdType>(h->cloth_offsets, h->cloth_ramp.data(), m + 1);
    shard_catalyst_wrap<vtkIdType>(h->cloth_connectivity, reinterpret_cast<const vtkIdType *>(f->cells), 3 * m);
    h->cloth->GetPolys()->SetData(h->cloth_offsets, h->cloth_connectivity);

    vtkPointData *pd = h->cloth->GetPointData();
    int n_cols = use ? (f->n_cell_cols < 16 ? f->n_cell_cols : 16) : 0;
    shard_catalyst_bind_columns(pd, h->cloth_names, h->cloth_arrays, n_cols, f->cell_cols, present,
                                static_cast<vtkIdType>(n), h->cloth_rank_array, h->cloth_rank_values);
    h->cloth->Modified();
    h->collection->Modified();
    return err->code;
}

/* Tears down whatever create() built so far; every rank calls it at the same point. */
static void shard_catalyst_free(shard_catalyst *h)
{
    if (h->particles) {
        /* The arrays still point at the driver's memory of the last execution, which may be gone by now:
         * catalyst_finalize must see empty arrays, not freed ones. */
        shard_catalyst_wrap<double>(h->coords, nullptr, 0);
        shard_catalyst_wrap<vtkIdType>(h->offsets, h->ramp.data(), h->ramp.empty() ? 0 : 1);
        shard_catalyst_wrap<vtkIdType>(h->connectivity, nullptr, 0);
        for (auto &a : h->arrays)
            a->Initialize();
        h->rank_array->Initialize();
    }
    if (h->cloth) {
        shard_catalyst_wrap<double>(h->cloth_coords, nullptr, 0);
        shard_catalyst_wrap<vtkIdType>(h->cloth_offsets, h->cloth_ramp.data(), h->cloth_ramp.empty() ? 0 : 1);
        shard_catalyst_wrap<vtkIdType>(h->cloth_connectivity, nullptr, 0);
        for (auto &a : h->cloth_arrays)
            a->Initialize();
        h->cloth_rank_array->Initialize();
    }
    if (h->processor) {
        /* Finalize runs each script's catalyst_finalize, so every pipeline has to be registered again (execute
         * registers only the scripts due at its step). */
        h->processor->RemoveAllPipelines();
        for (auto &s : h->scripts)
            if (s.pipeline)
                h->processor->AddPipeline(s.pipeline);
        h->processor->Finalize();
        h->processor = nullptr;
    }
    h->scripts.clear();
    if (h->python) {
        vtkPythonScopeGilEnsurer gil;
        Py_DECREF(h->python);
        h->python = nullptr;
    }
    delete h;
}

static void *shard_catalyst_create(const void *mpi_comm, int n_scripts, const char *const *scripts,
                                   shard_error *err)
{
    std::memset(err, 0, sizeof *err);
    MPI_Comm comm = *static_cast<const MPI_Comm *>(mpi_comm);
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);

    /* Checks that need nothing from ParaView, on every rank: every rank reads the files later. */
    for (int k = 0; k < n_scripts && !err->code; k++) {
        struct stat st;
        if (stat(scripts[k], &st) != 0 || access(scripts[k], R_OK) != 0)
            shard_catalyst_error(err, SHARD_EXIT_INPUT, "catalyst script '%s': cannot read it: %s", scripts[k],
                                 std::strerror(errno));
        else if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
            shard_catalyst_error(err, SHARD_EXIT_INPUT, "catalyst script '%s': not a file or a Python package folder",
                                 scripts[k]);
    }
    if (shard_catalyst_agree(comm, rank, size, err) >= 0)
        return nullptr;

    shard_catalyst *h = new shard_catalyst();
    h->comm = comm, h->rank = rank, h->size = size;
    if (!shard_catalyst_python_start(h))
        shard_catalyst_error(err, SHARD_EXIT_INTERNAL, "Catalyst: cannot start ParaView's Python interpreter");
    /* A syntax error is the same on every rank; rank 0 finds it and the message is broadcast. */
    for (int k = 0; k < n_scripts && !err->code && rank == 0; k++) {
        size_t len = std::strlen(scripts[k]);
        if (len < 3 || std::strcmp(scripts[k] + len - 3, ".py") != 0)
            continue;
        std::string why = shard_catalyst_python_call(h, "check_syntax", scripts[k]);
        if (!why.empty())
            shard_catalyst_error(err, SHARD_EXIT_INPUT, "catalyst script '%s': %s", scripts[k], why.c_str());
    }
    if (shard_catalyst_agree(comm, rank, size, err) >= 0) {
        shard_catalyst_free(h);
        return nullptr;
    }

    h->processor = vtkSmartPointer<vtkCPProcessor>::New();
    vtkMPICommunicatorOpaqueComm opaque(&h->comm);
    if (!h->processor->Initialize(opaque))
        shard_catalyst_error(err, SHARD_EXIT_INTERNAL,
                             "Catalyst: cannot initialise the co-processor (one in-situ instance per process)");
    /* ParaView's Python logger takes its level from vtkLogger's cutoff when `paraview` is first imported, and
     * ParaView turns the cutoff off on ranks other than 0, which the logger reads as "debug".  Debian's 5.11 log
     * handler then fails on every debug message (it asks for vtkLogger.VERBOSITY_DEBUG, which does not exist)
     * and prints a "Logging error" traceback for each.  The same level on every rank, never below INFO, avoids
     * both. */
    {
        vtkPythonScopeGilEnsurer gil;
        int v = shard_catalyst_verbosity();
        int level = v <= vtkLogger::VERBOSITY_ERROR ? 40 : v <= vtkLogger::VERBOSITY_WARNING ? 30 : 20;
        PyObject *f = PyDict_GetItemString(h->python, "set_paraview_log_level");
        PyObject *r = f ? PyObject_CallFunction(f, "i", level) : nullptr;
        if (!r)
            PyErr_Print();
        Py_XDECREF(r);
    }
    for (int k = 0; k < n_scripts && !err->code; k++) {
        shard_catalyst_script s;
        s.path = scripts[k];
        s.pipeline = vtkCPPythonPipeline::CreateAndInitializePipeline(scripts[k], 2);
        if (!s.pipeline)
            shard_catalyst_error(err, SHARD_EXIT_INPUT,
                                 "catalyst script '%s': ParaView cannot load it as a Catalyst script (messages above)",
                                 scripts[k]);
        h->scripts.push_back(s);
    }
    if (shard_catalyst_agree(comm, rank, size, err) >= 0) {
        shard_catalyst_free(h);
        return nullptr;
    }

    h->description = vtkSmartPointer<vtkCPDataDescription>::New();
    h->description->AddInput(SHARD_INSITU_CHANNEL);
    shard_catalyst_build_dataset(h);
    return h;
}

static int shard_catalyst_execute(void *impl, long step, double time, int n_due, const int *due,
                                  const shard_insitu_fields *f, shard_error *err)
{
    std::memset(err, 0, sizeof *err);
    shard_catalyst *h = static_cast<shard_catalyst *>(impl);
    uint64_t present[2];
    shard_catalyst_present(h, f, present);
    shard_catalyst_bind(h, f, present[0]);
    shard_catalyst_bind_frames(h, f);
    if (shard_catalyst_bind_cells(h, f, present[1], err))
        return err->code;
    for (int d = 0; d < n_due; d++) {
        shard_catalyst_script &s = h->scripts[static_cast<size_t>(due[d])];
        /* One script per CoProcess, so that a failure names its script and the others keep their own
         * cadence; the processor resets the description after each call, so time and grid are set again. */
        h->processor->RemoveAllPipelines();
        h->processor->AddPipeline(s.pipeline);
        h->description->SetTimeData(time, static_cast<vtkIdType>(step));
        h->description->GetInputDescriptionByName(SHARD_INSITU_CHANNEL)->SetGrid(h->collection);
        shard_catalyst_python_call(h, "capture_begin", nullptr);
        int ok = h->processor->CoProcess(h->description);
        std::string text = shard_catalyst_python_call(h, "capture_end", nullptr);
        if (ok) {
            std::fputs(text.c_str(), stderr); /* warnings the script printed: not ours to hide */
        } else {
            std::string why = shard_catalyst_last_line(text);
            shard_catalyst_error(err, SHARD_EXIT_INPUT, "catalyst script '%s': failed at step %ld: %s",
                                 s.path.c_str(), step,
                                 why.empty() ? "ParaView reported an error (messages above)" : why.c_str());
        }
        int first = shard_catalyst_agree(h->comm, h->rank, h->size, err);
        if (first >= 0) {
            if (first == h->rank && !text.empty()) {
                std::fprintf(stderr, "shard: catalyst script '%s' on rank %d:\n%s", s.path.c_str(), first,
                             text.c_str());
                std::fflush(stderr);
            }
            return err->code;
        }
    }
    return 0;
}

static void shard_catalyst_destroy(void *impl)
{
    if (impl)
        shard_catalyst_free(static_cast<shard_catalyst *>(impl));
}

extern "C" const shard_catalyst_api *shard_catalyst_module(void)
{
    static const shard_catalyst_api api = {SHARD_CATALYST_ABI, shard_catalyst_create, shard_catalyst_execute,
                                           shard_catalyst_destroy};
    return &api;
}
