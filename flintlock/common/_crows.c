/* The Table layer's row hot path in C (issue 28): building ``Row`` objects and reading key
 * fields out of them, each routine with a Python twin in ``common/row_batches.py`` that
 * behaves the same.
 *
 * A planned Table job builds a ``flintlock.common.types.Row`` for every record of every edge
 * (the source's rows, a Calc's projection, the group aggregation's -U/+U, an exchange's
 * decoded batch). In Python a row costs ``Row.__new__`` and three slot-descriptor calls
 * (about 400 ns a row on a loaded machine, ten times a list); here it is one allocation and
 * three pointer stores. ``bind`` hands the module the ``Row`` class and its three slot
 * descriptors once, at import of ``row_batches.py``; the slot offsets are read from the
 * descriptors, so nothing here knows the class's layout beyond "three object slots".
 *
 * - new_row(values, kind): one row (``values`` is used as is, not copied, like ``row_of``).
 * - rows_of(value_lists, kind): a list of rows of one kind.
 * - rows_with_kinds(kinds, value_lists): a list of rows, kind i for row i.
 * - rows_from_codes(codes, kinds, value_lists): as rows_with_kinds, the kinds given as a
 *   bytes of indexes into the tuple ``kinds`` (the changelog serializer's wire form).
 * - split_rows(rows, kinds): the inverse, for the serializer: (codes, value_lists) of a list of
 *   rows, or None if any record is not exactly a ``Row`` without field names whose kind is in
 *   ``kinds`` (the caller then pickles the batch as it is).
 * - split_columns(rows, kinds) / rows_from_columns(codes, kinds, columns): the same with the
 *   values as columns (rows of one width), the serializer's wire form.
 * - GroupAggKernel: a group aggregation's batch step (see its section below).
 * - FieldKey(indexes): a callable ``row -> row._values[i]`` (one index) or a tuple of the
 *   fields (several): the key selector of a GROUP BY without a Python frame per record. A
 *   record that is not exactly a ``Row`` is indexed with ``record[i]``.
 *
 * Each runs on the thread that owns its arguments; none releases the GIL.
 *
 * Rows the cycle collector does not track. Every row built here whose value list holds no
 * tracked container (numbers, strings, None, Decimals, dates: the Table layer's values) is
 * untracked, with its list (``PyObject_GC_UnTrack``), as CPython untracks a tuple of atoms.
 * A batch in flight is thousands of rows, and each young collection used to walk all of them
 * (issue 28: 200-450 ns a row of the SQL benchmark's job). Safe: the collector never frees an
 * untracked object and counts a reference from one as a reference from outside, so nothing
 * reachable is freed; the one cost is that a cycle made later through such a row (its list
 * given a container that refers back to it) is freed only when broken, never by the
 * collector. ``Row.__setitem__`` puts a row back (``track_row``) when it stores a tracked
 * object in it, so a cycle made through the public API is collected as before; only one made
 * by appending to the private ``_values`` list is not. ``row_batches.py``'s twins build the
 * same rows, tracked (docs/decisions.md).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

static PyTypeObject *row_type = NULL;
static Py_ssize_t off_values = 0, off_fields = 0, off_kind = 0;

#define SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

static int
offset_of(PyObject *descriptor, Py_ssize_t *offset)
{
    if (!Py_IS_TYPE(descriptor, &PyMemberDescr_Type)) {
        PyErr_SetString(PyExc_TypeError, "bind() takes the Row class's slot descriptors");
        return -1;
    }
    PyMemberDef *member = ((PyMemberDescrObject *)descriptor)->d_member;
    if (member->type != T_OBJECT_EX) {
        PyErr_SetString(PyExc_TypeError, "a Row slot is not an object slot");
        return -1;
    }
    *offset = member->offset;
    return 0;
}

static PyObject *
bind(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyType_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError,
                        "bind(Row, values_slot, fields_slot, kind_slot) takes a class and "
                        "its three slot descriptors");
        return NULL;
    }
    Py_ssize_t values, fields, kind;
    if (offset_of(args[1], &values) < 0 || offset_of(args[2], &fields) < 0
        || offset_of(args[3], &kind) < 0) {
        return NULL;
    }
    Py_XSETREF(row_type, (PyTypeObject *)Py_NewRef(args[0]));
    off_values = values;
    off_fields = fields;
    off_kind = kind;
    Py_RETURN_NONE;
}

static int
check_bound(void)
{
    if (row_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the Row class is not bound (call bind first)");
        return -1;
    }
    return 0;
}

/* Whether values is a list holding no object the cycle collector tracks (numbers, strings,
 * None, ... : no container), so that no reference cycle can pass through it as it is. */
static int
atomic_list(PyObject *values)
{
    if (!PyList_CheckExact(values)) {
        return 0;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(values); i++) {
        PyObject *value = PyList_GET_ITEM(values, i);
        if (PyObject_IS_GC(value) && PyObject_GC_IsTracked(value)) {
            return 0;
        }
    }
    return 1;
}

/* A row over values. A row over an atomic list is taken off the cycle collector's lists, the
 * list too (see "Rows the cycle collector does not track" at the top). */
static PyObject *
make(PyObject *values, PyObject *kind)
{
    PyObject *row = row_type->tp_alloc(row_type, 0);
    if (row == NULL) {
        return NULL;
    }
    SLOT(row, off_values) = Py_NewRef(values);
    SLOT(row, off_fields) = Py_NewRef(Py_None);
    SLOT(row, off_kind) = Py_NewRef(kind);
    if (atomic_list(values)) {
        if (PyObject_GC_IsTracked(values)) {
            PyObject_GC_UnTrack(values);
        }
        PyObject_GC_UnTrack(row);
    }
    return row;
}

/* track_row(row): puts an untracked row (and its value list) back on the cycle collector's
 * lists, for a row whose list was just given a container (``Row.__setitem__``). */
static PyObject *
track_row(PyObject *module, PyObject *row)
{
    if (check_bound() < 0) {
        return NULL;
    }
    if (!Py_IS_TYPE(row, row_type)) {
        PyErr_SetString(PyExc_TypeError, "track_row() takes a Row");
        return NULL;
    }
    PyObject *values = SLOT(row, off_values);
    if (values != NULL && PyObject_IS_GC(values) && !PyObject_GC_IsTracked(values)) {
        PyObject_GC_Track(values);
    }
    if (!PyObject_GC_IsTracked(row)) {
        PyObject_GC_Track(row);
    }
    Py_RETURN_NONE;
}

static PyObject *
new_row(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "new_row(values, kind) takes 2 arguments");
        return NULL;
    }
    if (check_bound() < 0) {
        return NULL;
    }
    return make(args[0], args[1]);
}

/* Where the kind of row i comes from: one kind for all, a list of kinds, or a bytes of
 * indexes into a tuple of kinds. */
typedef struct {
    PyObject *single;
    PyObject *list;
    const unsigned char *codes;
    PyObject *table;
} KindSource;

static PyObject *
kind_at(const KindSource *kinds, Py_ssize_t i)
{
    if (kinds->single != NULL) {
        return kinds->single;
    }
    if (kinds->list != NULL) {
        return PyList_GET_ITEM(kinds->list, i);
    }
    if (kinds->codes[i] >= PyTuple_GET_SIZE(kinds->table)) {
        PyErr_Format(PyExc_ValueError, "an unknown row kind %d", (int)kinds->codes[i]);
        return NULL;
    }
    return PyTuple_GET_ITEM(kinds->table, kinds->codes[i]);
}

static PyObject *
build_rows(PyObject *lists, const KindSource *kinds)
{
    if (check_bound() < 0) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(lists);
    PyObject *out = PyList_New(n);
    if (out == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *kind = kind_at(kinds, i);
        PyObject *row = kind == NULL ? NULL : make(PyList_GET_ITEM(lists, i), kind);
        if (row == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, row);
    }
    return out;
}

static PyObject *
rows_of(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "rows_of(value_lists: list, kind) takes 2 arguments");
        return NULL;
    }
    KindSource kinds = {.single = args[1]};
    return build_rows(args[0], &kinds);
}

static PyObject *
rows_with_kinds(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyList_Check(args[0]) || !PyList_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError,
                        "rows_with_kinds(kinds: list, value_lists: list) takes 2 lists");
        return NULL;
    }
    if (PyList_GET_SIZE(args[0]) != PyList_GET_SIZE(args[1])) {
        PyErr_Format(PyExc_ValueError, "%zd row kinds for %zd rows", PyList_GET_SIZE(args[0]),
                     PyList_GET_SIZE(args[1]));
        return NULL;
    }
    KindSource kinds = {.list = args[0]};
    return build_rows(args[1], &kinds);
}

static PyObject *
rows_from_codes(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyBytes_Check(args[0]) || !PyTuple_Check(args[1])
        || !PyList_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "rows_from_codes(codes: bytes, kinds: tuple, value_lists: list)");
        return NULL;
    }
    if (PyBytes_GET_SIZE(args[0]) != PyList_GET_SIZE(args[2])) {
        PyErr_Format(PyExc_ValueError, "%zd row kinds for %zd rows", PyBytes_GET_SIZE(args[0]),
                     PyList_GET_SIZE(args[2]));
        return NULL;
    }
    KindSource kinds = {.codes = (const unsigned char *)PyBytes_AS_STRING(args[0]),
                        .table = args[1]};
    return build_rows(args[2], &kinds);
}

/* The kind codes of rows (a bytes, code i the index of row i's kind in kinds), or Py_None
 * (a new reference) when a record is not exactly a Row without field names, or its kind is
 * not one of kinds; NULL with an exception for bad arguments. The first part of split_rows
 * and split_columns: a batch is taken apart only when every record is a plain row. */
static PyObject *
codes_of(PyObject *const *args, Py_ssize_t nargs, const char *signature)
{
    if (nargs != 2 || !PyList_Check(args[0]) || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, signature);
        return NULL;
    }
    if (check_bound() < 0) {
        return NULL;
    }
    PyObject *rows = args[0], *kinds = args[1];
    Py_ssize_t n = PyList_GET_SIZE(rows), known = PyTuple_GET_SIZE(kinds);
    if (known > 256) {
        PyErr_SetString(PyExc_ValueError, "at most 256 row kinds");
        return NULL;
    }
    PyObject *codes = PyBytes_FromStringAndSize(NULL, n);
    if (codes == NULL) {
        return NULL;
    }
    unsigned char *code = (unsigned char *)PyBytes_AS_STRING(codes);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *row = PyList_GET_ITEM(rows, i);
        if (!Py_IS_TYPE(row, row_type) || SLOT(row, off_fields) != Py_None
            || SLOT(row, off_values) == NULL) {
            Py_DECREF(codes);
            Py_RETURN_NONE;
        }
        Py_ssize_t k = 0;
        while (k < known && PyTuple_GET_ITEM(kinds, k) != SLOT(row, off_kind)) {
            k++;
        }
        if (k == known) {
            Py_DECREF(codes);
            Py_RETURN_NONE;
        }
        code[i] = (unsigned char)k;
    }
    return codes;
}

static PyObject *
split_rows(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *codes = codes_of(args, nargs, "split_rows(rows: list, kinds: tuple)");
    if (codes == NULL || codes == Py_None) {
        return codes;
    }
    PyObject *rows = args[0];
    Py_ssize_t n = PyList_GET_SIZE(rows);
    PyObject *lists = PyList_New(n);
    if (lists == NULL) {
        Py_DECREF(codes);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyList_SET_ITEM(lists, i, Py_NewRef(SLOT(PyList_GET_ITEM(rows, i), off_values)));
    }
    PyObject *result = PyTuple_Pack(2, codes, lists);
    Py_DECREF(codes);
    Py_DECREF(lists);
    return result;
}

/* split_columns(rows, kinds): as split_rows, the values as columns: (codes, columns) with
 * columns[j][i] field j of row i; None also when the rows' value lists differ in length (or
 * there are none). rows_from_columns(codes, kinds, columns): the inverse. The changelog
 * serializer's wire form: a column of a batch unpickles at a fraction of a list per row's
 * cost, and a row's list is then built at its final size. */
static PyObject *
split_columns(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *codes = codes_of(args, nargs, "split_columns(rows: list, kinds: tuple)");
    if (codes == NULL || codes == Py_None) {
        return codes;
    }
    PyObject *rows = args[0];
    Py_ssize_t n = PyList_GET_SIZE(rows), width = -1;
    for (Py_ssize_t i = 0; i < n; i++) {  /* value lists of one width */
        PyObject *values = SLOT(PyList_GET_ITEM(rows, i), off_values);
        if (!PyList_CheckExact(values) || (width >= 0 && PyList_GET_SIZE(values) != width)) {
            Py_DECREF(codes);
            Py_RETURN_NONE;
        }
        width = PyList_GET_SIZE(values);
    }
    if (width < 0) {
        Py_DECREF(codes);
        Py_RETURN_NONE;
    }
    PyObject *columns = PyList_New(width);
    for (Py_ssize_t j = 0; columns != NULL && j < width; j++) {
        PyObject *column = PyList_New(n);
        if (column == NULL) {
            Py_CLEAR(columns);
            break;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *values = SLOT(PyList_GET_ITEM(rows, i), off_values);
            PyList_SET_ITEM(column, i, Py_NewRef(PyList_GET_ITEM(values, j)));
        }
        PyList_SET_ITEM(columns, j, column);
    }
    PyObject *result = columns == NULL ? NULL : PyTuple_Pack(2, codes, columns);
    Py_XDECREF(columns);
    Py_DECREF(codes);
    return result;
}

/* Whether every item of the list ``columns`` is a list of ``n`` values. */
static int
columns_of_length(PyObject *columns, Py_ssize_t n)
{
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(columns); j++) {
        PyObject *column = PyList_GET_ITEM(columns, j);
        if (!PyList_Check(column) || PyList_GET_SIZE(column) != n) {
            return 0;
        }
    }
    return 1;
}

static PyObject *
rows_from_columns(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyBytes_Check(args[0]) || !PyTuple_Check(args[1])
        || !PyList_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "rows_from_columns(codes: bytes, kinds: tuple, columns: list)");
        return NULL;
    }
    if (check_bound() < 0) {
        return NULL;
    }
    PyObject *columns = args[2];
    Py_ssize_t n = PyBytes_GET_SIZE(args[0]), width = PyList_GET_SIZE(columns);
    if (!columns_of_length(columns, n)) {
        PyErr_Format(PyExc_ValueError, "%zd row kinds for a column that is not a list of "
                     "%zd values", n, n);
        return NULL;
    }
    KindSource kinds = {.codes = (const unsigned char *)PyBytes_AS_STRING(args[0]),
                        .table = args[1]};
    PyObject *out = PyList_New(n);
    if (out == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *kind = kind_at(&kinds, i);
        PyObject *values = kind == NULL ? NULL : PyList_New(width);
        if (values == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        for (Py_ssize_t j = 0; j < width; j++) {
            PyList_SET_ITEM(values, j, Py_NewRef(PyList_GET_ITEM(PyList_GET_ITEM(columns, j), i)));
        }
        PyObject *row = make(values, kind);
        Py_DECREF(values);
        if (row == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, row);
    }
    return out;
}

/* -- FieldKey ------------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    Py_ssize_t count;
    Py_ssize_t *indexes;
    PyObject *index_objects; /* a tuple of the indexes as ints, for records that are not Rows */
} FieldKeyObject;

static PyObject *
field_of(PyObject *record, Py_ssize_t index, PyObject *index_object)
{
    if (Py_IS_TYPE(record, row_type)) {
        PyObject *values = SLOT(record, off_values);
        if (values != NULL && PyList_CheckExact(values)) {
            if (index < PyList_GET_SIZE(values)) {
                return Py_NewRef(PyList_GET_ITEM(values, index));
            }
            PyErr_SetString(PyExc_IndexError, "list index out of range");
            return NULL;
        }
    }
    return PyObject_GetItem(record, index_object);
}

static PyObject *
field_key_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    FieldKeyObject *self = (FieldKeyObject *)callable;
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "a FieldKey takes one record");
        return NULL;
    }
    PyObject *record = args[0];
    if (self->count == 1) {
        return field_of(record, self->indexes[0], PyTuple_GET_ITEM(self->index_objects, 0));
    }
    PyObject *key = PyTuple_New(self->count);
    if (key == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < self->count; i++) {
        PyObject *value = field_of(record, self->indexes[i],
                                   PyTuple_GET_ITEM(self->index_objects, i));
        if (value == NULL) {
            Py_DECREF(key);
            return NULL;
        }
        PyTuple_SET_ITEM(key, i, value);
    }
    return key;
}

static PyObject *
field_key_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *given;
    if (!PyArg_ParseTuple(args, "O!:FieldKey", &PyTuple_Type, &given)) {
        return NULL;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(given);
    if (count == 0) {
        PyErr_SetString(PyExc_ValueError, "a FieldKey needs at least one index");
        return NULL;
    }
    FieldKeyObject *self = (FieldKeyObject *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->indexes = PyMem_New(Py_ssize_t, count);
    if (self->indexes == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t index = PyLong_AsSsize_t(PyTuple_GET_ITEM(given, i));
        if (index == -1 && PyErr_Occurred()) {
            Py_DECREF(self);
            return NULL;
        }
        if (index < 0) {
            PyErr_SetString(PyExc_ValueError, "a FieldKey's indexes are >= 0");
            Py_DECREF(self);
            return NULL;
        }
        self->indexes[i] = index;
    }
    self->count = count;
    self->index_objects = Py_NewRef(given);
    self->vectorcall = field_key_call;
    return (PyObject *)self;
}

static void
field_key_dealloc(FieldKeyObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyMem_Free(self->indexes);
    Py_XDECREF(self->index_objects);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static PyObject *
field_key_reduce(FieldKeyObject *self, PyObject *unused)
{
    return Py_BuildValue("O(O)", (PyObject *)Py_TYPE(self), self->index_objects);
}

static PyMethodDef field_key_methods[] = {
    {"__reduce__", (PyCFunction)field_key_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef field_key_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(FieldKeyObject, vectorcall), READONLY, NULL},
    {"indexes", T_OBJECT_EX, offsetof(FieldKeyObject, index_objects), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot field_key_slots[] = {
    {Py_tp_new, field_key_new},
    {Py_tp_dealloc, field_key_dealloc},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_methods, field_key_methods},
    {Py_tp_members, field_key_members},
    {Py_tp_doc, "FieldKey(indexes): row -> the row's field (one index) or a tuple of fields."},
    {0, NULL},
};

static PyType_Spec field_key_spec = {
    .name = "flintlock.common._crows.FieldKey",
    .basicsize = sizeof(FieldKeyObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .slots = field_key_slots,
};

/* -- GroupAggKernel ------------------------------------------------------------------------ */

/* A group aggregation's batch step over the heap backend's dict of accumulators, for the
 * built-in aggregates (issue 28): what ``agg_codegen.compile_group_batch`` compiles to Python
 * for the same calls, row for row and accumulator for accumulator (that compiled step is this
 * kernel's Python twin; tests/table/test_agg_kernel.py runs both on the same batches).
 *
 * The accumulator of a key is the list the Python step keeps: [record count, the slots of
 * call 0, call 1, ...]; a new key's list starts as a copy of ``init``. Per call an op:
 * (code, argument index, first slot, the function object, bits), with the codes below; bits
 * (8, 16, 32, 64; 0 for none) is a SUM's Java integer width: the total itself while it fits,
 * else ``function.wrap(total)``. AVG's value is ``function.quotient(total, count)``; a
 * retraction into MIN/MAX/FIRST_VALUE/LAST_VALUE raises ``function.no_retraction()``.
 *
 * kernel(records, table) returns the output rows of the batch in order, or None (and changes
 * nothing) when a record is not exactly a ``Row`` over a list long enough: the caller then
 * runs the Python step. Only while no snapshot is in flight (no copy-on-write here).
 * kernel.columns(codes, columns, table) is the same over a batch as columns (no rows). */

enum { OP_COUNT_STAR, OP_COUNT, OP_SUM, OP_SUM0, OP_AVG, OP_MIN, OP_MAX, OP_FIRST, OP_LAST };

typedef struct {
    int code;
    Py_ssize_t arg;
    Py_ssize_t base;
    PyObject *fn;
    int bits;
    PyObject *lo, *hi; /* -2**(bits-1) and 2**(bits-1) as ints, for a total that is no int */
} AggOp;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    Py_ssize_t n_keys, n_ops, width, min_values;
    Py_ssize_t *keys;
    AggOp *ops;
    PyObject *init;
    PyObject *kinds[4]; /* INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE */
    int update_before, suppress;
    int counts_rows; /* a COUNT(*) call: its value changes with every row kept (no equal result) */
} AggKernelObject;

static PyObject *one_object = NULL, *zero_object = NULL;

static void
set_slot(PyObject *list, Py_ssize_t i, PyObject *value)
{
    PyObject *old = PyList_GET_ITEM(list, i);
    PyList_SET_ITEM(list, i, value);
    Py_DECREF(old);
}

/* list[i] += value (Python's in-place add), or -= */
static int
add_slot(PyObject *list, Py_ssize_t i, PyObject *value, int subtract)
{
    PyObject *old = PyList_GET_ITEM(list, i);
    PyObject *result;
    if (PyLong_CheckExact(old) && PyLong_CheckExact(value)) {  /* int + int: no dispatch */
        result = subtract ? PyLong_Type.tp_as_number->nb_subtract(old, value)
                          : PyLong_Type.tp_as_number->nb_add(old, value);
    } else {
        result = subtract ? PyNumber_InPlaceSubtract(old, value)
                          : PyNumber_InPlaceAdd(old, value);
    }
    if (result == NULL) {
        return -1;
    }
    set_slot(list, i, result);
    return 0;
}

static int
truth(PyObject *value)
{
    return value == Py_None ? 0 : PyObject_IsTrue(value);
}

/* The total itself while it fits in op->bits, else op->fn.wrap(total): a new reference. */
static PyObject *
ranged(const AggOp *op, PyObject *total)
{
    if (op->bits == 0) {
        return Py_NewRef(total);
    }
    int fits;
    if (PyLong_CheckExact(total)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(total, &overflow);
        if (v == -1 && PyErr_Occurred()) {
            return NULL;
        }
        long long half = op->bits == 64 ? 0 : (1LL << (op->bits - 1));
        fits = !overflow && (op->bits == 64 || (-half <= v && v < half));
    } else {
        fits = PyObject_RichCompareBool(op->lo, total, Py_LE);
        if (fits > 0) {
            fits = PyObject_RichCompareBool(total, op->hi, Py_LT);
        }
        if (fits < 0) {
            return NULL;
        }
    }
    return fits ? Py_NewRef(total) : PyObject_CallMethod(op->fn, "wrap", "O", total);
}

/* The value of one call over accs (a new reference). */
static PyObject *
op_value(const AggOp *op, PyObject *accs)
{
    PyObject *a0 = PyList_GET_ITEM(accs, op->base);
    switch (op->code) {
    case OP_COUNT_STAR:
        return Py_NewRef(PyList_GET_ITEM(accs, 0));
    case OP_SUM:
    case OP_AVG: {
        PyObject *a1 = PyList_GET_ITEM(accs, op->base + 1);
        int nonempty = truth(a1);
        if (nonempty < 0) {
            return NULL;
        }
        if (!nonempty) {
            Py_RETURN_NONE;
        }
        if (op->code == OP_SUM) {
            return ranged(op, a0);
        }
        return PyObject_CallMethod(op->fn, "quotient", "OO", a0, a1);
    }
    case OP_SUM0:
        return ranged(op, a0);
    default:
        return Py_NewRef(a0);
    }
}

static int
op_accumulate(const AggOp *op, PyObject *accs, PyObject *values)
{
    if (op->code == OP_COUNT_STAR) {
        return 0;
    }
    PyObject *x = PyList_GET_ITEM(values, op->arg);
    if (x == Py_None) {
        return 0;
    }
    PyObject *a0 = PyList_GET_ITEM(accs, op->base);
    int better;
    switch (op->code) {
    case OP_COUNT:
        return add_slot(accs, op->base, one_object, 0);
    case OP_SUM:
    case OP_AVG:
        if (add_slot(accs, op->base, x, 0) < 0) {
            return -1;
        }
        return add_slot(accs, op->base + 1, one_object, 0);
    case OP_SUM0:
        return add_slot(accs, op->base, x, 0);
    case OP_MIN:
    case OP_MAX:
        better = a0 == Py_None ? 1
                 : PyObject_RichCompareBool(x, a0, op->code == OP_MIN ? Py_LT : Py_GT);
        break;
    case OP_FIRST:
        better = a0 == Py_None;
        break;
    default: /* OP_LAST */
        better = 1;
    }
    if (better < 0) {
        return -1;
    }
    if (better) {
        set_slot(accs, op->base, Py_NewRef(x));
    }
    return 0;
}

static int
op_retract(const AggOp *op, PyObject *accs, PyObject *values)
{
    if (op->code == OP_COUNT_STAR) {
        return 0;
    }
    if (op->code >= OP_MIN) {
        PyObject *error = PyObject_CallMethod(op->fn, "no_retraction", NULL);
        if (error != NULL) {
            PyErr_SetObject((PyObject *)Py_TYPE(error), error);
            Py_DECREF(error);
        }
        return -1;
    }
    PyObject *x = PyList_GET_ITEM(values, op->arg);
    if (x == Py_None) {
        return 0;
    }
    switch (op->code) {
    case OP_COUNT:
        return add_slot(accs, op->base, one_object, 1);
    case OP_SUM:
    case OP_AVG:
        if (add_slot(accs, op->base, x, 1) < 0) {
            return -1;
        }
        return add_slot(accs, op->base + 1, one_object, 1);
    default: /* OP_SUM0 */
        return add_slot(accs, op->base, x, 1);
    }
}

/* The values of every call into out[0..n_ops) (new references); -1 on an error (none kept). */
static int
all_values(const AggKernelObject *self, PyObject *accs, PyObject **out)
{
    for (Py_ssize_t i = 0; i < self->n_ops; i++) {
        out[i] = op_value(&self->ops[i], accs);
        if (out[i] == NULL) {
            for (Py_ssize_t j = 0; j < i; j++) {
                Py_CLEAR(out[j]);
            }
            return -1;
        }
    }
    return 0;
}

static void
drop_values(const AggKernelObject *self, PyObject **values)
{
    for (Py_ssize_t i = 0; i < self->n_ops; i++) {
        Py_CLEAR(values[i]);
    }
}

/* Appends Row([key fields..., values...], kind) to out. */
static int
emit(const AggKernelObject *self, PyObject *out, PyObject *row_values, PyObject **values,
     PyObject *kind)
{
    PyObject *fields = PyList_New(self->n_keys + self->n_ops);
    if (fields == NULL) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < self->n_keys; i++) {
        PyList_SET_ITEM(fields, i, Py_NewRef(PyList_GET_ITEM(row_values, self->keys[i])));
    }
    for (Py_ssize_t i = 0; i < self->n_ops; i++) {
        PyList_SET_ITEM(fields, self->n_keys + i, Py_NewRef(values[i]));
    }
    PyObject *row = make(fields, kind);
    Py_DECREF(fields);
    if (row == NULL) {
        return -1;
    }
    int failed = PyList_Append(out, row);
    Py_DECREF(row);
    return failed;
}

static int
unchanged(const AggKernelObject *self, PyObject **before, PyObject **after)
{
    for (Py_ssize_t i = 0; i < self->n_ops; i++) {
        PyObject *a = after[i], *b = before[i];
        int same;
        if (a == b && (a == Py_None || PyLong_CheckExact(a))) {
            same = 1;
        } else {
            PyObject *result = PyObject_RichCompare(a, b, Py_EQ);
            if (result == NULL) {
                return -1;
            }
            same = PyObject_IsTrue(result);
            Py_DECREF(result);
        }
        if (same <= 0) {
            return same;
        }
    }
    return 1;
}

static PyObject *
key_of(const AggKernelObject *self, PyObject *values)
{
    if (self->n_keys == 1) {
        return Py_NewRef(PyList_GET_ITEM(values, self->keys[0]));
    }
    PyObject *key = PyTuple_New(self->n_keys);
    if (key != NULL) {
        for (Py_ssize_t i = 0; i < self->n_keys; i++) {
            PyTuple_SET_ITEM(key, i, Py_NewRef(PyList_GET_ITEM(values, self->keys[i])));
        }
    }
    return key;
}

static PyObject *
new_accumulator(const AggKernelObject *self)
{
    Py_ssize_t n = PyTuple_GET_SIZE(self->init);
    PyObject *accs = PyList_New(n);
    if (accs != NULL) {
        for (Py_ssize_t i = 0; i < n; i++) {
            PyList_SET_ITEM(accs, i, Py_NewRef(PyTuple_GET_ITEM(self->init, i)));
        }
    }
    return accs;
}

/* One row of the batch (its value list and kind): 0, or -1 with an exception set. Reads
 * ``values`` only (never keeps it): the column path hands it one scratch list per batch. */
static int
step(AggKernelObject *self, PyObject *values, PyObject *kind, PyObject *table, PyObject *out,
     PyObject **before, PyObject **after)
{
    int result = -1;
    PyObject *key = key_of(self, values);
    if (key == NULL) {
        return -1;
    }
    PyObject *accs = PyDict_GetItemWithError(table, key);
    if (accs == NULL && PyErr_Occurred()) {
        goto done;
    }
    if (accs != NULL && (!PyList_CheckExact(accs) || PyList_GET_SIZE(accs) != self->width)) {
        PyErr_Format(PyExc_TypeError, "a group aggregation's accumulator is not a list of %zd",
                     self->width);
        accs = NULL;
        goto done;
    }
    Py_XINCREF(accs);
    int accumulate = kind == self->kinds[0] || kind == self->kinds[2];
    if (accs == NULL) {
        if (!accumulate) {
            result = 0;
            goto done;
        }
        accs = new_accumulator(self);
        if (accs == NULL) {
            goto done;
        }
        for (Py_ssize_t i = 0; i < self->n_ops; i++) {
            if (op_accumulate(&self->ops[i], accs, values) < 0) {
                goto done;
            }
        }
        if (PyDict_SetItem(table, key, accs) < 0 || all_values(self, accs, after) < 0) {
            goto done;
        }
        result = emit(self, out, values, after, self->kinds[0]);
        drop_values(self, after);
        goto done;
    }
    /* the old values: for -U, for -D, and to compare unless a COUNT(*) tells them apart */
    int need_before = self->update_before || !accumulate || (self->suppress && !self->counts_rows);
    if (need_before && all_values(self, accs, before) < 0) {
        goto done;
    }
    if (add_slot(accs, 0, one_object, !accumulate) < 0) {
        goto done;
    }
    if (!accumulate) {
        PyObject *eq = PyObject_RichCompare(PyList_GET_ITEM(accs, 0), zero_object, Py_EQ);
        int last = eq == NULL ? -1 : PyObject_IsTrue(eq);
        Py_XDECREF(eq);
        if (last < 0) {
            goto done;
        }
        if (last) {
            if (PyDict_DelItem(table, key) < 0) {
                goto done;
            }
            result = emit(self, out, values, before, self->kinds[3]);
            goto done;
        }
    }
    for (Py_ssize_t i = 0; i < self->n_ops; i++) {
        if ((accumulate ? op_accumulate : op_retract)(&self->ops[i], accs, values) < 0) {
            goto done;
        }
    }
    if (all_values(self, accs, after) < 0) {
        goto done;
    }
    int same = self->suppress && !self->counts_rows ? unchanged(self, before, after) : 0;
    if (same < 0) {
        goto done;
    }
    result = 0;
    if (!same) {
        if ((self->update_before && emit(self, out, values, before, self->kinds[1]) < 0)
            || emit(self, out, values, after, self->kinds[2]) < 0) {
            result = -1;
        }
    }
done:
    drop_values(self, before);
    drop_values(self, after);
    Py_XDECREF(accs);
    Py_DECREF(key);
    return result;
}

static PyObject *
agg_kernel_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    AggKernelObject *self = (AggKernelObject *)callable;
    if (PyVectorcall_NARGS(nargsf) != 2 || kwnames != NULL || !PyList_Check(args[0])
        || !PyDict_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "a GroupAggKernel takes (records: list, table: dict)");
        return NULL;
    }
    if (check_bound() < 0) {
        return NULL;
    }
    PyObject *records = args[0], *table = args[1];
    Py_ssize_t n = PyList_GET_SIZE(records);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *row = PyList_GET_ITEM(records, i);
        PyObject *values = Py_IS_TYPE(row, row_type) ? SLOT(row, off_values) : NULL;
        if (values == NULL || !PyList_CheckExact(values)
            || PyList_GET_SIZE(values) < self->min_values || SLOT(row, off_kind) == NULL) {
            Py_RETURN_NONE;
        }
    }
    PyObject *out = PyList_New(0);
    PyObject **scratch = PyMem_New(PyObject *, 2 * self->n_ops + 1);
    if (out == NULL || scratch == NULL) {
        Py_XDECREF(out);
        PyMem_Free(scratch);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < 2 * self->n_ops; i++) {
        scratch[i] = NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        /* a row's own reference: the step may drop the last other one (a key's values) */
        PyObject *row = Py_NewRef(PyList_GET_ITEM(records, i));
        int failed = step(self, SLOT(row, off_values), SLOT(row, off_kind), table, out, scratch,
                          scratch + self->n_ops);
        Py_DECREF(row);
        if (failed) {
            Py_DECREF(out);
            out = NULL;
            break;
        }
    }
    PyMem_Free(scratch);
    return out;
}

/* kernel.columns(codes, columns, table): the same step over a batch sent as columns (the
 * changelog serializer's wire form: row i of kind ``kinds[codes[i]]``, its field j
 * ``columns[j][i]``), with no row objects: row i's values are put into one scratch list in
 * turn, which the step reads and never keeps. The output rows, or None (nothing changed) when
 * a column is not a list of len(codes) values, there are fewer columns than the step reads,
 * or a code is not one of the four kinds: the caller then builds the rows. */
static PyObject *
agg_kernel_columns(AggKernelObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyBytes_Check(args[0]) || !PyList_Check(args[1])
        || !PyDict_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "columns(codes: bytes, columns: list, table: dict) of a GroupAggKernel");
        return NULL;
    }
    if (check_bound() < 0) {
        return NULL;
    }
    PyObject *columns = args[1], *table = args[2];
    const unsigned char *codes = (const unsigned char *)PyBytes_AS_STRING(args[0]);
    Py_ssize_t n = PyBytes_GET_SIZE(args[0]), width = PyList_GET_SIZE(columns);
    if (width < self->min_values || !columns_of_length(columns, n)) {
        Py_RETURN_NONE;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (codes[i] > 3) {
            Py_RETURN_NONE;
        }
    }
    PyObject *out = PyList_New(0);
    PyObject *values = PyList_New(width);
    PyObject **scratch = PyMem_New(PyObject *, 2 * self->n_ops + 1);
    if (out == NULL || values == NULL || scratch == NULL) {
        Py_XDECREF(out);
        Py_XDECREF(values);
        PyMem_Free(scratch);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t j = 0; j < width; j++) {
        PyList_SET_ITEM(values, j, Py_NewRef(Py_None));
    }
    for (Py_ssize_t i = 0; i < 2 * self->n_ops; i++) {
        scratch[i] = NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        for (Py_ssize_t j = 0; j < width; j++) { /* the column keeps its value alive */
            PyObject **item = &((PyListObject *)values)->ob_item[j];
            Py_SETREF(*item, Py_NewRef(PyList_GET_ITEM(PyList_GET_ITEM(columns, j), i)));
        }
        if (step(self, values, self->kinds[codes[i]], table, out, scratch,
                 scratch + self->n_ops) < 0) {
            Py_CLEAR(out);
            break;
        }
    }
    Py_DECREF(values);
    PyMem_Free(scratch);
    return out;
}

static PyMethodDef agg_kernel_methods[] = {
    {"columns", (PyCFunction)(void (*)(void))agg_kernel_columns, METH_FASTCALL,
     "columns(codes, columns, table): the batch step over a batch sent as columns, or None."},
    {NULL, NULL, 0, NULL},
};

static int
parse_op(PyObject *given, AggOp *op, Py_ssize_t width, Py_ssize_t *min_values)
{
    int code, bits;
    Py_ssize_t arg, base;
    PyObject *fn;
    if (!PyTuple_Check(given)
        || !PyArg_ParseTuple(given, "innOi:GroupAggKernel op", &code, &arg, &base, &fn, &bits)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "an op is (code, argument, slot, function, bits)");
        }
        return -1;
    }
    Py_ssize_t slots = code == OP_COUNT_STAR ? 0 : (code == OP_SUM || code == OP_AVG) ? 2 : 1;
    if (code < OP_COUNT_STAR || code > OP_LAST || arg < 0 || base < 1
        || base + slots > width || (bits != 0 && bits != 8 && bits != 16 && bits != 32
                                    && bits != 64)) {
        PyErr_Format(PyExc_ValueError, "a bad op (%d, %zd, %zd, bits %d) for %zd slots", code,
                     arg, base, bits, width);
        return -1;
    }
    op->code = code;
    op->arg = arg;
    op->base = code == OP_COUNT_STAR ? 0 : base;
    op->bits = bits;
    op->fn = Py_NewRef(fn);
    if (bits != 0) {
        PyObject *half = PyLong_FromUnsignedLongLong(1ULL << (bits - 1));
        op->hi = half;
        op->lo = half == NULL ? NULL : PyNumber_Negative(half);
        if (op->lo == NULL) {
            return -1;
        }
    }
    if (code != OP_COUNT_STAR && arg + 1 > *min_values) {
        *min_values = arg + 1;
    }
    return 0;
}

static void
agg_kernel_dealloc(AggKernelObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    if (self->ops != NULL) {
        for (Py_ssize_t i = 0; i < self->n_ops; i++) {
            Py_XDECREF(self->ops[i].fn);
            Py_XDECREF(self->ops[i].lo);
            Py_XDECREF(self->ops[i].hi);
        }
    }
    PyMem_Free(self->ops);
    PyMem_Free(self->keys);
    Py_XDECREF(self->init);
    for (int i = 0; i < 4; i++) {
        Py_XDECREF(self->kinds[i]);
    }
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

static PyObject *
agg_kernel_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *grouping, *ops, *init, *kinds;
    int update_before, suppress;
    if (!PyArg_ParseTuple(args, "O!O!O!O!pp:GroupAggKernel", &PyTuple_Type, &grouping,
                          &PyTuple_Type, &ops, &PyTuple_Type, &init, &PyTuple_Type, &kinds,
                          &update_before, &suppress)) {
        return NULL;
    }
    if (PyTuple_GET_SIZE(kinds) != 4 || PyTuple_GET_SIZE(init) < 1) {
        PyErr_SetString(PyExc_ValueError, "GroupAggKernel takes 4 row kinds and a non-empty "
                        "initial accumulator");
        return NULL;
    }
    AggKernelObject *self = (AggKernelObject *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->vectorcall = agg_kernel_call;
    self->width = PyTuple_GET_SIZE(init);
    self->init = Py_NewRef(init);
    for (int i = 0; i < 4; i++) {
        self->kinds[i] = Py_NewRef(PyTuple_GET_ITEM(kinds, i));
    }
    self->update_before = update_before;
    self->suppress = suppress;
    self->n_keys = PyTuple_GET_SIZE(grouping);
    self->keys = PyMem_New(Py_ssize_t, self->n_keys + 1);
    self->ops = PyMem_Calloc(PyTuple_GET_SIZE(ops) + 1, sizeof(AggOp));
    if (self->keys == NULL || self->ops == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < self->n_keys; i++) {
        Py_ssize_t index = PyLong_AsSsize_t(PyTuple_GET_ITEM(grouping, i));
        if (index < 0) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_ValueError, "a grouping index is >= 0");
            }
            Py_DECREF(self);
            return NULL;
        }
        self->keys[i] = index;
        if (index + 1 > self->min_values) {
            self->min_values = index + 1;
        }
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(ops); i++) {
        self->n_ops = i + 1;
        if (parse_op(PyTuple_GET_ITEM(ops, i), &self->ops[i], self->width,
                     &self->min_values) < 0) {
            Py_DECREF(self);
            return NULL;
        }
        if (self->ops[i].code == OP_COUNT_STAR) {
            self->counts_rows = 1;
        }
    }
    return (PyObject *)self;
}

static PyMemberDef agg_kernel_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(AggKernelObject, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot agg_kernel_slots[] = {
    {Py_tp_new, agg_kernel_new},
    {Py_tp_dealloc, agg_kernel_dealloc},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_members, agg_kernel_members},
    {Py_tp_methods, agg_kernel_methods},
    {Py_tp_doc, "GroupAggKernel(grouping, ops, init, kinds, generate_update_before, "
                "suppress_unchanged): (records, table) -> output rows, or None."},
    {0, NULL},
};

static PyType_Spec agg_kernel_spec = {
    .name = "flintlock.common._crows.GroupAggKernel",
    .basicsize = sizeof(AggKernelObject),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .slots = agg_kernel_slots,
};


static PyMethodDef module_methods[] = {
    {"bind", (PyCFunction)(void (*)(void))bind, METH_FASTCALL, NULL},
    {"new_row", (PyCFunction)(void (*)(void))new_row, METH_FASTCALL, NULL},
    {"track_row", (PyCFunction)track_row, METH_O, NULL},
    {"rows_of", (PyCFunction)(void (*)(void))rows_of, METH_FASTCALL, NULL},
    {"rows_with_kinds", (PyCFunction)(void (*)(void))rows_with_kinds, METH_FASTCALL, NULL},
    {"rows_from_codes", (PyCFunction)(void (*)(void))rows_from_codes, METH_FASTCALL, NULL},
    {"split_rows", (PyCFunction)(void (*)(void))split_rows, METH_FASTCALL, NULL},
    {"split_columns", (PyCFunction)(void (*)(void))split_columns, METH_FASTCALL, NULL},
    {"rows_from_columns", (PyCFunction)(void (*)(void))rows_from_columns, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef crows_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "flintlock.common._crows",
    .m_doc = "The Table layer's row hot path in C (row_batches.py has the Python twins).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__crows(void)
{
    PyObject *module = PyModule_Create(&crows_module);
    if (module == NULL) {
        return NULL;
    }
    PyObject *field_key = PyType_FromSpec(&field_key_spec);
    if (field_key == NULL || PyModule_AddObject(module, "FieldKey", field_key) < 0) {
        Py_XDECREF(field_key);
        Py_DECREF(module);
        return NULL;
    }
    PyObject *kernel = PyType_FromSpec(&agg_kernel_spec);
    if (kernel == NULL || PyModule_AddObject(module, "GroupAggKernel", kernel) < 0) {
        Py_XDECREF(kernel);
        Py_DECREF(module);
        return NULL;
    }
    one_object = PyLong_FromLong(1);
    zero_object = PyLong_FromLong(0);
    if (one_object == NULL || zero_object == NULL) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
