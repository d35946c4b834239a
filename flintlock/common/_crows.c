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
 * - FieldKey(indexes): a callable ``row -> row._values[i]`` (one index) or a tuple of the
 *   fields (several): the key selector of a GROUP BY without a Python frame per record. A
 *   record that is not exactly a ``Row`` is indexed with ``record[i]``.
 *
 * Each runs on the thread that owns its arguments; none releases the GIL.
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
    return row;
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

static PyObject *
split_rows(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyList_Check(args[0]) || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "split_rows(rows: list, kinds: tuple)");
        return NULL;
    }
    if (check_bound() < 0) {
        return NULL;
    }
    PyObject *rows = args[0], *kinds = args[1];
    Py_ssize_t n = PyList_GET_SIZE(rows);
    Py_ssize_t known = PyTuple_GET_SIZE(kinds);
    if (known > 256) {
        PyErr_SetString(PyExc_ValueError, "at most 256 row kinds");
        return NULL;
    }
    PyObject *codes = PyBytes_FromStringAndSize(NULL, n);
    if (codes == NULL) {
        return NULL;
    }
    unsigned char *code = (unsigned char *)PyBytes_AS_STRING(codes);
    PyObject *lists = PyList_New(n);
    if (lists == NULL) {
        Py_DECREF(codes);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *row = PyList_GET_ITEM(rows, i);
        if (!Py_IS_TYPE(row, row_type) || SLOT(row, off_fields) != Py_None
            || SLOT(row, off_values) == NULL) {
            goto not_rows;
        }
        PyObject *kind = SLOT(row, off_kind);
        Py_ssize_t k = 0;
        while (k < known && PyTuple_GET_ITEM(kinds, k) != kind) {
            k++;
        }
        if (k == known) {
            goto not_rows;
        }
        code[i] = (unsigned char)k;
        PyList_SET_ITEM(lists, i, Py_NewRef(SLOT(row, off_values)));
    }
    PyObject *result = PyTuple_Pack(2, codes, lists);
    Py_DECREF(codes);
    Py_DECREF(lists);
    return result;
not_rows:
    Py_DECREF(codes);
    Py_DECREF(lists);
    Py_RETURN_NONE;
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

static PyMethodDef module_methods[] = {
    {"bind", (PyCFunction)(void (*)(void))bind, METH_FASTCALL, NULL},
    {"new_row", (PyCFunction)(void (*)(void))new_row, METH_FASTCALL, NULL},
    {"rows_of", (PyCFunction)(void (*)(void))rows_of, METH_FASTCALL, NULL},
    {"rows_with_kinds", (PyCFunction)(void (*)(void))rows_with_kinds, METH_FASTCALL, NULL},
    {"rows_from_codes", (PyCFunction)(void (*)(void))rows_from_codes, METH_FASTCALL, NULL},
    {"split_rows", (PyCFunction)(void (*)(void))split_rows, METH_FASTCALL, NULL},
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
    return module;
}
