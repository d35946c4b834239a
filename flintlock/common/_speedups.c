/* flintlock's optional accelerator: a few hot-path routines in C, each with a Python twin.
 *
 * flintlock is written in Python; this file is what PyFlink's Cython "fast coders" are to
 * PyFlink: an optional speed-up, built when a C compiler is present, with the same behaviour
 * in Python when it is not (docs/decisions.md, "An optional C accelerator").
 *
 * - Counter: flintlock.runtime.metrics.metrics.Counter. PyFlink's inc(n=1) as a method of a
 *   C type costs less than a Python attribute increment; a method written in Python costs
 *   about 20 ns more (benchmarks/metrics_cost.py).
 * - pack_rows / unpack_rows: the typed codec's rows layout (runtime/network/typed_codec.py).
 *   pack_rows checks and packs a batch of tuples of fixed-width fields in one pass, each
 *   integer column as narrow as the batch allows, and returns the struct codes it used with
 *   the bytes: what the Python twin does with struct.Struct.pack per record, without a Python
 *   call per record. unpack_rows reads them back.
 * - transpose: the typed codec's columns layout (tuples with text or booleans): a batch of
 *   records into one list per field, checking each record's type and arity, which the
 *   Python twin does with a type scan and zip(*records, strict=True).
 *
 * - route_by_key: the keyed record writer's loop (runtime/network/key_routing.py): each
 *   record's key from the user's key selector, its channel from the writer's key cache (a
 *   callback for keys not in it), the record (and its timestamp) appended to that channel's
 *   list. One user call per record and no interpreted bytecode around it.
 * - tumbling_panes: the window operator's grouping of a timestamped batch by tumbling window
 *   start, then key (runtime/tasks/window_grouping.py); None when a timestamp or the window's
 *   size or offset does not fit 64-bit arithmetic, and the caller takes the Python twin.
 * - fold_added: an AggregateFunction's add over a window's values, in order.
 * - reduce_into: the keyed reduce's loop on the heap backend's table
 *   (runtime/tasks/keyed_reduce.py): key, fold, store, emit, with no interpreted code.
 * - pack_longs: the typed codec's 64-bit integer columns (the timestamps of a run, LONG
 *   fields in the columns layout), which array('q', values) converts at ~100 ns a value.
 *
 * Each runs on the thread that owns the object or the batch; none releases the GIL.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* -- Counter ---------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    long long count;
} CounterObject;

static int
counter_amount(PyObject *const *args, Py_ssize_t nargs, const char *name, long long *amount)
{
    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most 1 argument (%zd given)", name, nargs);
        return -1;
    }
    if (nargs == 0) {
        *amount = 1;
        return 0;
    }
    *amount = PyLong_AsLongLong(args[0]);
    if (*amount == -1 && PyErr_Occurred()) {
        return -1;
    }
    return 0;
}

static PyObject *
counter_add(CounterObject *self, long long amount)
{
    long long result;
    if (__builtin_add_overflow(self->count, amount, &result)) {
        PyErr_SetString(PyExc_OverflowError, "a counter holds a 64-bit signed count");
        return NULL;
    }
    self->count = result;
    Py_RETURN_NONE;
}

static PyObject *
counter_inc(CounterObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    long long amount;
    if (nargs == 0) {  /* the common call first: inc() */
        return counter_add(self, 1);
    }
    if (counter_amount(args, nargs, "inc", &amount) < 0) {
        return NULL;
    }
    return counter_add(self, amount);
}

static PyObject *
counter_dec(CounterObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    long long amount;
    if (counter_amount(args, nargs, "dec", &amount) < 0) {
        return NULL;
    }
    if (amount == LLONG_MIN) {
        PyErr_SetString(PyExc_OverflowError, "a counter holds a 64-bit signed count");
        return NULL;
    }
    return counter_add(self, -amount);
}

static PyObject *
counter_get_count(CounterObject *self, PyObject *Py_UNUSED(ignored))
{
    return PyLong_FromLongLong(self->count);
}

static PyMethodDef counter_methods[] = {
    {"inc", (PyCFunction)(void (*)(void))counter_inc, METH_FASTCALL,
     "inc(n=1): add n to the count."},
    {"dec", (PyCFunction)(void (*)(void))counter_dec, METH_FASTCALL,
     "dec(n=1): subtract n from the count."},
    {"get_count", (PyCFunction)counter_get_count, METH_NOARGS, "The current count."},
    {NULL, NULL, 0, NULL},
};

static void
counter_dealloc(PyObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    type->tp_free(self);
    Py_DECREF(type);  /* an instance of a heap type holds a reference to it */
}

/* A heap type, so that flintlock can give it the class attributes a metric has (its kind).
 * No Python subclass: CPython calls a C method fast only on an instance of its exact type. */
static PyType_Slot counter_slots[] = {
    {Py_tp_doc, "A 64-bit count that goes up and down (PyFlink's Counter API)."},
    {Py_tp_methods, counter_methods},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_dealloc, counter_dealloc},
    {0, NULL},
};

static PyType_Spec counter_spec = {
    .name = "flintlock.metrics.Counter",
    .basicsize = sizeof(CounterObject),
    .flags = Py_TPFLAGS_DEFAULT,
    .slots = counter_slots,
};

/* -- pack_rows -------------------------------------------------------------------------- */

/* One cell of the batch, converted in the first pass and written in the second. */
typedef union {
    long long integer;
    double real;
} Cell;

static int
code_width(char code)
{
    switch (code) {
    case 'b': return 1;
    case 'h': return 2;
    case 'i': case 'f': return 4;
    case 'q': case 'd': return 8;
    default: return 0;
    }
}

static int
is_integer_code(char code)
{
    return code == 'b' || code == 'h' || code == 'i' || code == 'q';
}

/* The narrowest integer code, no wider than `declared`, that holds [low, high]. */
static char
narrowest(char declared, long long low, long long high)
{
    static const char order[] = "bhiq";
    for (int index = 0; order[index] != declared; index++) {
        int bits = 8 * code_width(order[index]);
        long long limit = 1LL << (bits - 1);
        if (low >= -limit && high < limit) {
            return order[index];
        }
    }
    return declared;
}

/* Converts one field as struct's code would: integers through __index__, reals through
 * __float__; a value out of the declared range raises OverflowError. */
static int
convert_field(PyObject *value, char code, Cell *cell)
{
    if (code == 'd' || code == 'f') {
        double real = PyFloat_AsDouble(value);
        if (real == -1.0 && PyErr_Occurred()) {
            return -1;
        }
        if (code == 'f') {
            char scratch[4];
            if (PyFloat_Pack4(real, scratch, 1) < 0) {
                return -1;
            }
        }
        cell->real = real;
        return 0;
    }
    int overflow = 0;
    long long integer = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (integer == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (overflow == 0 && code != 'q') {
        long long limit = 1LL << (8 * code_width(code) - 1);
        overflow = integer < -limit || integer >= limit;
    }
    if (overflow) {
        PyErr_Format(PyExc_OverflowError, "%R does not fit a '%c' field", value, code);
        return -1;
    }
    cell->integer = integer;
    return 0;
}

/* A record of a TUPLE type: exactly a tuple or a list (anything else would be taken apart
 * into fields: a str, a dict's keys, a Row), of `arity` fields. */
static int
check_record(PyObject *record, Py_ssize_t arity)
{
    if (!PyTuple_CheckExact(record) && !PyList_CheckExact(record)) {
        PyErr_Format(PyExc_TypeError, "expected tuples or lists, got %.100s",
                     Py_TYPE(record)->tp_name);
        return -1;
    }
    if (PySequence_Fast_GET_SIZE(record) != arity) {
        PyErr_Format(PyExc_ValueError, "expected %zd fields, got %zd", arity,
                     PySequence_Fast_GET_SIZE(record));
        return -1;
    }
    return 0;
}

/* First pass: every row checked and converted into `cells`; integer columns' bounds kept. */
static int
convert_rows(PyObject *rows, const char *codes, Py_ssize_t arity, Cell *cells,
             long long *low, long long *high)
{
    Py_ssize_t count = PyTuple_GET_SIZE(rows);
    for (Py_ssize_t row = 0; row < count; row++) {
        PyObject *record = PyTuple_GET_ITEM(rows, row);
        if (check_record(record, arity) < 0) {
            return -1;
        }
        /* a list is copied: a field's __index__ could resize it */
        PyObject *fields = PyTuple_CheckExact(record) ? Py_NewRef(record)
                                                      : PyList_AsTuple(record);
        if (fields == NULL) {
            return -1;
        }
        Cell *line = cells + row * arity;
        for (Py_ssize_t field = 0; field < arity; field++) {
            if (convert_field(PyTuple_GET_ITEM(fields, field), codes[field], line + field) < 0) {
                Py_DECREF(fields);
                return -1;
            }
            if (is_integer_code(codes[field])) {
                long long value = line[field].integer;
                if (value < low[field]) low[field] = value;
                if (value > high[field]) high[field] = value;
            }
        }
        Py_DECREF(fields);
    }
    return 0;
}

static void
write_integer(char *out, long long value, int width)
{
    unsigned long long bits = (unsigned long long)value;
    for (int byte = 0; byte < width; byte++) {
        out[byte] = (char)(bits >> (8 * byte));  /* little-endian on every machine */
    }
}

/* Second pass: the cells written row by row with the codes chosen. */
static void
write_rows(char *out, const Cell *cells, Py_ssize_t count, Py_ssize_t arity, const char *used)
{
    for (Py_ssize_t row = 0; row < count; row++) {
        const Cell *line = cells + row * arity;
        for (Py_ssize_t field = 0; field < arity; field++) {
            char code = used[field];
            int width = code_width(code);
            if (code == 'd') {
                PyFloat_Pack8(line[field].real, out, 1);
            } else if (code == 'f') {
                PyFloat_Pack4(line[field].real, out, 1);
            } else {
                write_integer(out, line[field].integer, width);
            }
            out += width;
        }
    }
}

static PyObject *
pack_rows_into(PyObject *rows, const char *codes, Py_ssize_t arity)
{
    Py_ssize_t count = PyTuple_GET_SIZE(rows);
    if (count > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(Cell) / arity) {
        return PyErr_NoMemory();
    }
    Cell *cells = PyMem_Malloc((size_t)(count * arity) * sizeof(Cell) + 1);
    long long *bounds = PyMem_Malloc((size_t)arity * 2 * sizeof(long long));
    char *used = PyMem_Malloc((size_t)arity + 1);
    PyObject *result = NULL;
    if (cells == NULL || bounds == NULL || used == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    long long *low = bounds, *high = bounds + arity;
    for (Py_ssize_t field = 0; field < arity; field++) {
        low[field] = 0;
        high[field] = 0;
    }
    if (convert_rows(rows, codes, arity, cells, low, high) < 0) {
        goto done;
    }
    Py_ssize_t row_size = 0;
    for (Py_ssize_t field = 0; field < arity; field++) {
        char code = codes[field];
        used[field] = is_integer_code(code) ? narrowest(code, low[field], high[field]) : code;
        row_size += code_width(used[field]);
    }
    used[arity] = '\0';
    PyObject *payload = PyBytes_FromStringAndSize(NULL, count * row_size);
    if (payload == NULL) {
        goto done;
    }
    write_rows(PyBytes_AS_STRING(payload), cells, count, arity, used);
    result = Py_BuildValue("(sN)", used, payload);
done:
    PyMem_Free(cells);
    PyMem_Free(bounds);
    PyMem_Free(used);
    return result;
}

/* The field codes of a call (codes: str, second argument), checked: each one of bhiqdf, at
 * least one. Returns them (UTF-8, owned by the str) and their arity and row size. */
static const char *
field_codes(PyObject *const *args, Py_ssize_t nargs, const char *signature,
            Py_ssize_t *arity, Py_ssize_t *row_size)
{
    if (nargs != 2 || !PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, signature);
        return NULL;
    }
    const char *codes = PyUnicode_AsUTF8AndSize(args[0], arity);
    if (codes == NULL) {
        return NULL;
    }
    if (*arity == 0) {
        PyErr_SetString(PyExc_ValueError, "a row has at least one field");
        return NULL;
    }
    *row_size = 0;
    for (Py_ssize_t field = 0; field < *arity; field++) {
        int width = code_width(codes[field]);
        if (width == 0) {
            PyErr_Format(PyExc_ValueError, "unknown field code %R", args[0]);
            return NULL;
        }
        *row_size += width;
    }
    return codes;
}

static PyObject *
pack_rows(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t arity, row_size;
    const char *codes = field_codes(args, nargs, "pack_rows(codes: str, rows: sequence)",
                                    &arity, &row_size);
    if (codes == NULL) {
        return NULL;
    }
    PyObject *rows = PySequence_Tuple(args[1]);  /* a snapshot the fields' code cannot change */
    if (rows == NULL) {
        return NULL;
    }
    PyObject *result = pack_rows_into(rows, codes, arity);
    Py_DECREF(rows);
    return result;
}

/* -- unpack_rows ------------------------------------------------------------------------ */

static long long
read_integer(const unsigned char *in, int width)
{
    unsigned long long bits = 0;
    for (int byte = 0; byte < width; byte++) {
        bits |= (unsigned long long)in[byte] << (8 * byte);
    }
    if (width < 8 && (bits >> (8 * width - 1)) & 1) {
        bits |= ~0ULL << (8 * width);  /* sign-extend */
    }
    return (long long)bits;
}

static PyObject *
read_field(const unsigned char *in, char code)
{
    if (code == 'd') {
        double real = PyFloat_Unpack8((const char *)in, 1);
        return real == -1.0 && PyErr_Occurred() ? NULL : PyFloat_FromDouble(real);
    }
    if (code == 'f') {
        double real = PyFloat_Unpack4((const char *)in, 1);
        return real == -1.0 && PyErr_Occurred() ? NULL : PyFloat_FromDouble(real);
    }
    return PyLong_FromLongLong(read_integer(in, code_width(code)));
}

/* One record: a tuple of ints and floats, which can never be part of a reference cycle, so it
 * is untracked by the cycle collector at once (CPython untracks such a tuple itself, but only
 * when a collection first visits it: a batch of decoded records made young collections visit
 * tens of thousands of them). */
static PyObject *
read_row(const unsigned char *in, const char *codes, Py_ssize_t arity)
{
    PyObject *row = PyTuple_New(arity);
    if (row == NULL) {
        return NULL;
    }
    for (Py_ssize_t field = 0; field < arity; field++) {
        PyObject *value = read_field(in, codes[field]);
        if (value == NULL) {
            Py_DECREF(row);
            return NULL;
        }
        PyTuple_SET_ITEM(row, field, value);
        in += code_width(codes[field]);
    }
    PyObject_GC_UnTrack(row);
    return row;
}

static PyObject *
unpack_rows(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t arity, row_size;
    const char *codes = field_codes(args, nargs,
                                    "unpack_rows(codes: str, payload: bytes-like)",
                                    &arity, &row_size);
    if (codes == NULL) {
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[1], &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    PyObject *rows = NULL;
    if (view.len % row_size != 0) {
        PyErr_Format(PyExc_ValueError, "%zd bytes are no whole number of %zd-byte rows",
                     view.len, row_size);
        goto done;
    }
    Py_ssize_t count = view.len / row_size;
    rows = PyList_New(count);
    if (rows == NULL) {
        goto done;
    }
    const unsigned char *in = view.buf;
    for (Py_ssize_t index = 0; index < count; index++, in += row_size) {
        PyObject *row = read_row(in, codes, arity);
        if (row == NULL) {
            Py_CLEAR(rows);
            goto done;
        }
        PyList_SET_ITEM(rows, index, row);
    }
done:
    PyBuffer_Release(&view);
    return rows;
}

/* -- transpose -------------------------------------------------------------------------- */

/* The fields of one record into the columns; no Python code runs meanwhile, so the borrowed
 * references stay valid. */
static int
spread_row(PyObject *record, PyObject **columns, Py_ssize_t arity, Py_ssize_t row)
{
    if (check_record(record, arity) < 0) {
        return -1;
    }
    PyObject **fields = PySequence_Fast_ITEMS(record);
    for (Py_ssize_t field = 0; field < arity; field++) {
        PyList_SET_ITEM(columns[field], row, Py_NewRef(fields[field]));
    }
    return 0;
}

static PyObject *
transpose(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "transpose(rows: sequence, arity: int)");
        return NULL;
    }
    Py_ssize_t arity = PyLong_AsSsize_t(args[1]);
    if (arity == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (arity <= 0) {
        PyErr_SetString(PyExc_ValueError, "a record has at least one field");
        return NULL;
    }
    PyObject *rows = PySequence_Fast(args[0], "transpose() needs a sequence of records");
    if (rows == NULL) {
        return NULL;
    }
    Py_ssize_t count = PySequence_Fast_GET_SIZE(rows);
    PyObject *result = PyTuple_New(arity);
    for (Py_ssize_t field = 0; result != NULL && field < arity; field++) {
        PyObject *column = PyList_New(count);  /* NULL items until filled: freed safely */
        if (column == NULL) {
            Py_CLEAR(result);
            break;
        }
        PyTuple_SET_ITEM(result, field, column);
    }
    if (result != NULL) {
        PyObject **columns = &PyTuple_GET_ITEM(result, 0);
        PyObject **records = PySequence_Fast_ITEMS(rows);
        for (Py_ssize_t row = 0; row < count; row++) {
            if (spread_row(records[row], columns, arity, row) < 0) {
                Py_CLEAR(result);
                break;
            }
        }
    }
    Py_DECREF(rows);
    return result;
}

/* -- route_by_key ----------------------------------------------------------------------- */

/* The channel of key: the cache's entry, else on_miss(key) (a key not in the cache, or one
 * that cannot be hashed). -1 with an exception set on failure. */
static Py_ssize_t
channel_of(PyObject *key, PyObject *channels, PyObject *on_miss, Py_ssize_t count)
{
    PyObject *found = PyDict_GetItemWithError(channels, key);
    Py_ssize_t channel;
    if (found != NULL) {
        channel = PyLong_AsSsize_t(found);
    }
    else {
        if (PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_TypeError)) {
                return -1;
            }
            PyErr_Clear();  /* an unhashable key: on_miss hashes it its own way */
        }
        PyObject *computed = PyObject_CallOneArg(on_miss, key);
        if (computed == NULL) {
            return -1;
        }
        channel = PyLong_AsSsize_t(computed);
        Py_DECREF(computed);
    }
    if (channel == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (channel < 0 || channel >= count) {
        PyErr_Format(PyExc_IndexError, "channel %zd of %zd", channel, count);
        return -1;
    }
    return channel;
}

static int
append_to(PyObject *lists, Py_ssize_t index, PyObject *item)
{
    if (index >= PyList_GET_SIZE(lists)) {  /* the user's code shortened it */
        PyErr_SetString(PyExc_IndexError, "route_by_key: the targets changed");
        return -1;
    }
    PyObject *target = PyList_GET_ITEM(lists, index);
    if (!PyList_Check(target)) {
        PyErr_SetString(PyExc_TypeError, "route_by_key: every target must be a list");
        return -1;
    }
    return PyList_Append(target, item);
}

/* One record: its key, its channel, appended (with its timestamp when stamps is given). */
static int
route_one(PyObject *record, PyObject *stamp, PyObject *const *args, Py_ssize_t count)
{
    PyObject *key = PyObject_CallOneArg(args[1], record);
    if (key == NULL) {
        return -1;
    }
    Py_ssize_t channel = channel_of(key, args[2], args[3], count);
    Py_DECREF(key);
    if (channel < 0 || append_to(args[4], channel, record) < 0) {
        return -1;
    }
    return stamp == NULL ? 0 : append_to(args[6], channel, stamp);
}

static PyObject *
route_by_key(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7 || !PyList_Check(args[0]) || !PyDict_CheckExact(args[2])
            || !PyList_Check(args[4])
            || (args[5] != Py_None && (!PyList_Check(args[5]) || !PyList_Check(args[6])))) {
        PyErr_SetString(PyExc_TypeError,
                        "route_by_key(records: list, key_of, channels: dict, on_miss, "
                        "targets: list, stamps: list | None, stamp_targets: list | None)");
        return NULL;
    }
    PyObject *records = args[0], *stamps = args[5] == Py_None ? NULL : args[5];
    Py_ssize_t count = PyList_GET_SIZE(args[4]);
    if (stamps != NULL && (PyList_GET_SIZE(stamps) != PyList_GET_SIZE(records)
                           || PyList_GET_SIZE(args[6]) != count)) {
        PyErr_SetString(PyExc_ValueError, "route_by_key: values and timestamps differ in length");
        return NULL;
    }
    /* The user's key selector may do anything, even change the lists: sizes are read again
     * and the record held while it runs. */
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(records); i++) {
        PyObject *record = Py_NewRef(PyList_GET_ITEM(records, i));
        PyObject *stamp = NULL;
        if (stamps != NULL) {
            if (i >= PyList_GET_SIZE(stamps)) {
                Py_DECREF(record);
                PyErr_SetString(PyExc_ValueError, "route_by_key: the timestamps changed");
                return NULL;
            }
            stamp = Py_NewRef(PyList_GET_ITEM(stamps, i));
        }
        int failed = route_one(record, stamp, args, count);
        Py_DECREF(record);
        Py_XDECREF(stamp);
        if (failed) {
            return NULL;
        }
    }
    Py_RETURN_NONE;
}

/* -- tumbling_panes --------------------------------------------------------------------- */

/* The start of the tumbling window of timestamp (Python's floored %); 0 when it does not fit
 * 64-bit arithmetic. */
static int
window_start(PyObject *stamp, long long size, long long offset, long long *start)
{
    int overflow = 0;
    long long timestamp = PyLong_Check(stamp) ? PyLong_AsLongLongAndOverflow(stamp, &overflow)
                                              : 0;
    long long shifted;
    if (!PyLong_Check(stamp) || overflow || __builtin_sub_overflow(timestamp, offset, &shifted)) {
        return 0;
    }
    long long rest = shifted % size;
    if (rest < 0) {
        rest += size;
    }
    return !__builtin_sub_overflow(timestamp, rest, start);
}

/* record into pane[key_of(record)], a list made on the key's first record. */
static int
add_to_pane(PyObject *pane, PyObject *key_of, PyObject *record)
{
    PyObject *key = PyObject_CallOneArg(key_of, record);
    if (key == NULL) {
        return -1;
    }
    PyObject *group = PyDict_GetItemWithError(pane, key);
    int failed;
    if (group != NULL) {
        failed = PyList_Append(group, record);
    }
    else if (PyErr_Occurred()) {
        failed = -1;
    }
    else {
        group = PyList_New(1);
        failed = group == NULL ? -1 : 0;
        if (group != NULL) {
            PyList_SET_ITEM(group, 0, Py_NewRef(record));
            failed = PyDict_SetItem(pane, key, group);
            Py_DECREF(group);
        }
    }
    Py_DECREF(key);
    return failed;
}

/* The pane (key -> values) of window start in panes, made when new; a borrowed reference. */
static PyObject *
pane_of(PyObject *panes, long long start)
{
    PyObject *start_obj = PyLong_FromLongLong(start);
    if (start_obj == NULL) {
        return NULL;
    }
    PyObject *pane = PyDict_GetItemWithError(panes, start_obj);
    if (pane == NULL && !PyErr_Occurred()) {
        pane = PyDict_New();
        if (pane != NULL) {
            int failed = PyDict_SetItem(panes, start_obj, pane);
            Py_DECREF(pane);  /* panes holds it */
            pane = failed ? NULL : pane;
        }
    }
    Py_DECREF(start_obj);
    return pane;
}

/* The window starts of all stamps, before any user code runs; 0 when one does not fit. */
static int
window_starts(PyObject *stamps, long long size, long long offset, long long *starts)
{
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(stamps); i++) {
        if (!window_start(PyList_GET_ITEM(stamps, i), size, offset, &starts[i])) {
            return 0;
        }
    }
    return 1;
}

/* Every record into its window's pane under its key; -1 on an error. */
static int
fill_panes(PyObject *panes, PyObject *records, const long long *starts, Py_ssize_t count,
           PyObject *key_of)
{
    PyObject *pane = NULL;
    long long last_start = 0;
    /* records is read again after each user call: the key selector could change it. */
    for (Py_ssize_t i = 0; i < count && i < PyList_GET_SIZE(records); i++) {
        if (pane == NULL || starts[i] != last_start) {  /* a batch mostly stays in a window */
            pane = pane_of(panes, starts[i]);  /* panes is ours: no user code reaches it */
            if (pane == NULL) {
                return -1;
            }
            last_start = starts[i];
        }
        PyObject *record = Py_NewRef(PyList_GET_ITEM(records, i));
        int failed = add_to_pane(pane, key_of, record);
        Py_DECREF(record);
        if (failed) {
            return -1;
        }
    }
    return 0;
}

static PyObject *
tumbling_panes(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5 || !PyList_Check(args[0]) || !PyList_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "tumbling_panes(records: list, stamps: list, key_of, "
                                         "size: int, offset: int)");
        return NULL;
    }
    if (PyList_GET_SIZE(args[0]) != PyList_GET_SIZE(args[1])) {
        PyErr_SetString(PyExc_ValueError, "tumbling_panes: values and timestamps differ in length");
        return NULL;
    }
    int overflow_size = 0, overflow_offset = 0;
    long long size = PyLong_AsLongLongAndOverflow(args[3], &overflow_size);
    long long offset = PyLong_AsLongLongAndOverflow(args[4], &overflow_offset);
    if (PyErr_Occurred()) {
        return NULL;
    }
    if (overflow_size || overflow_offset || size <= 0) {
        Py_RETURN_NONE;
    }
    Py_ssize_t count = PyList_GET_SIZE(args[1]);
    long long *starts = PyMem_Malloc((count ? count : 1) * sizeof(long long));
    if (starts == NULL) {
        return PyErr_NoMemory();
    }
    if (!window_starts(args[1], size, offset, starts)) {
        PyMem_Free(starts);
        Py_RETURN_NONE;
    }
    PyObject *panes = PyDict_New();
    if (panes != NULL && fill_panes(panes, args[0], starts, count, args[2]) < 0) {
        Py_CLEAR(panes);
    }
    PyMem_Free(starts);
    return panes;
}

/* -- fold_added ------------------------------------------------------------------------- */

static PyObject *
fold_added(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyList_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "fold_added(add, values: list, accumulator)");
        return NULL;
    }
    PyObject *add = args[0], *values = args[1];
    PyObject *accumulator = Py_NewRef(args[2]);
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(values); i++) {  /* add may change values */
        PyObject *call[2] = {Py_NewRef(PyList_GET_ITEM(values, i)), accumulator};
        PyObject *next = PyObject_Vectorcall(add, call, 2, NULL);
        Py_DECREF(call[0]);
        Py_DECREF(accumulator);
        if (next == NULL) {
            return NULL;
        }
        accumulator = next;
    }
    return accumulator;
}

/* -- pack_longs ------------------------------------------------------------------------- */

static PyObject *
pack_longs(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 1 || !PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "pack_longs(values: list)");
        return NULL;
    }
    PyObject *values = args[0];
    Py_ssize_t count = PyList_GET_SIZE(values);
    for (Py_ssize_t i = 0; i < count; i++) {  /* anything but an int: the Python twin */
        if (!PyLong_CheckExact(PyList_GET_ITEM(values, i))) {
            Py_RETURN_NONE;
        }
    }
    PyObject *packed = PyBytes_FromStringAndSize(NULL, count * 8);
    if (packed == NULL) {
        return NULL;
    }
    char *out = PyBytes_AS_STRING(packed);
    for (Py_ssize_t i = 0; i < count; i++) {  /* no Python code runs: the list stays */
        long long value = PyLong_AsLongLong(PyList_GET_ITEM(values, i));
        if (value == -1 && PyErr_Occurred()) {
            Py_DECREF(packed);
            return NULL;  /* OverflowError, as array('q') raises */
        }
        write_integer(out + 8 * i, value, 8);
    }
    return packed;
}

/* -- reduce_into ------------------------------------------------------------------------ */

/* One record of reduce_into: the key's accumulator folded with it, stored, and appended to
 * out (a None accumulator removes the key's entry, as ValueState.update(None)). */
static int
reduce_one(PyObject *record, PyObject *get_key, PyObject *reduce, PyObject *table,
           PyObject *out)
{
    PyObject *key = PyObject_CallOneArg(get_key, record);
    if (key == NULL) {
        return -1;
    }
    PyObject *previous = PyDict_GetItemWithError(table, key);
    PyObject *accumulator = NULL;
    if (previous == NULL && PyErr_Occurred()) {
        Py_DECREF(key);
        return -1;
    }
    if (previous == NULL || previous == Py_None) {
        accumulator = Py_NewRef(record);
    }
    else {
        PyObject *call[2] = {Py_NewRef(previous), record};  /* held: reduce may change table */
        accumulator = PyObject_Vectorcall(reduce, call, 2, NULL);
        Py_DECREF(call[0]);
    }
    int failed = accumulator == NULL ? -1 : 0;
    if (!failed && accumulator == Py_None) {
        if (PyDict_DelItem(table, key) < 0) {
            failed = PyErr_ExceptionMatches(PyExc_KeyError) ? (PyErr_Clear(), 0) : -1;
        }
    }
    else if (!failed) {
        failed = PyDict_SetItem(table, key, accumulator);
    }
    if (!failed) {
        failed = PyList_Append(out, accumulator);
    }
    Py_DECREF(key);
    Py_XDECREF(accumulator);
    return failed;
}

static PyObject *
reduce_into(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyList_Check(args[0]) || !PyDict_CheckExact(args[3])) {
        PyErr_SetString(PyExc_TypeError,
                        "reduce_into(records: list, get_key, reduce, table: dict)");
        return NULL;
    }
    PyObject *records = args[0];
    PyObject *out = PyList_New(0);
    /* records is read again after each user call: user code could change it */
    for (Py_ssize_t i = 0; out != NULL && i < PyList_GET_SIZE(records); i++) {
        PyObject *record = Py_NewRef(PyList_GET_ITEM(records, i));
        if (reduce_one(record, args[1], args[2], args[3], out) < 0) {
            Py_CLEAR(out);
        }
        Py_DECREF(record);
    }
    return out;
}

/* -- module ----------------------------------------------------------------------------- */

static PyMethodDef module_methods[] = {
    {"pack_rows", (PyCFunction)(void (*)(void))pack_rows, METH_FASTCALL,
     "pack_rows(codes, rows) -> (codes used, bytes): rows of fixed-width fields, "
     "little-endian, each integer column as narrow as the rows allow."},
    {"fold_added", (PyCFunction)(void (*)(void))fold_added, METH_FASTCALL,
     "fold_added(add, values, accumulator) -> accumulator: add(value, accumulator) for each "
     "value in order (an AggregateFunction's add over a window's values)."},
    {"pack_longs", (PyCFunction)(void (*)(void))pack_longs, METH_FASTCALL,
     "pack_longs(values) -> bytes | None: a list of ints as little-endian 64-bit integers "
     "(what array('q', values).tobytes() gives on a little-endian machine); None when a "
     "value is not exactly an int."},
    {"reduce_into", (PyCFunction)(void (*)(void))reduce_into, METH_FASTCALL,
     "reduce_into(records, get_key, reduce, table) -> list: per record, table[key] = record "
     "or reduce(table[key], record) (None removes the entry); the accumulators in order."},
    {"route_by_key", (PyCFunction)(void (*)(void))route_by_key, METH_FASTCALL,
     "route_by_key(records, key_of, channels, on_miss, targets, stamps, stamp_targets): each "
     "record appended to targets[channel of key_of(record)] (channels[key], else "
     "on_miss(key)), its timestamp to stamp_targets[channel] when stamps is not None."},
    {"tumbling_panes", (PyCFunction)(void (*)(void))tumbling_panes, METH_FASTCALL,
     "tumbling_panes(records, stamps, key_of, size, offset) -> {start: {key: [records]}} in "
     "first-seen order, or None when a value does not fit 64-bit arithmetic."},
    {"transpose", (PyCFunction)(void (*)(void))transpose, METH_FASTCALL,
     "transpose(rows, arity) -> tuple of lists: the records' fields as columns; every record "
     "a tuple or list of arity fields."},
    {"unpack_rows", (PyCFunction)(void (*)(void))unpack_rows, METH_FASTCALL,
     "unpack_rows(codes, payload) -> list of tuples: what pack_rows wrote, each record a "
     "tuple the cycle collector does not track."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "flintlock.common._speedups",
    .m_doc = "flintlock's optional accelerator (a Counter, the typed codec's row packer, "
             "the keyed writer's routing and the window operator's grouping).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    PyObject *module = PyModule_Create(&speedups_module);
    if (module == NULL) {
        return NULL;
    }
    PyObject *counter = PyType_FromSpec(&counter_spec);
    if (counter == NULL || PyModule_AddObject(module, "Counter", counter) < 0) {
        Py_XDECREF(counter);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
