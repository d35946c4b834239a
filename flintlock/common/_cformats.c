/* The csv format's batch split in C (issue 33): the filesystem source's lines, joined by
 * "\n", cut into columns in one pass, BIGINT-like columns read as ints and plain TIMESTAMP
 * columns as datetimes on the way.
 *
 * split_columns(text, delimiter, width, count, kinds) -> list | None
 *   text: ``count`` lines joined by "\n"; delimiter: one character (not "\n");
 *   kinds: bytes, one per column: 0 not read (None in the result), 1 the text as it is,
 *   2 an int (an optional "-" and 1 to 18 ASCII digits), 3 a TIMESTAMP of the plain shape
 *   ``yyyy-MM-dd[ T]HH:mm:ss[.f{1,6}]`` (a naive datetime).
 *   Returns ``width`` entries, a list of ``count`` values per read column; or None where the
 *   batch is not plain: a line without exactly width - 1 delimiters, an int or timestamp
 *   text outside those shapes, a timestamp the datetime type refuses. The caller then reads
 *   the batch with its Python twin (flintlock/table/formats/csv.py, ``_python_split``), which
 *   decides every such case; on plain batches both give the same values (a property test,
 *   tests/table/test_csv_columns_c.py, holds them equal).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <datetime.h>

typedef struct {
    int kind;
    const void *data;
} Text;

#define AT(t, i)                                                                          \
    ((t).kind == PyUnicode_1BYTE_KIND ? (Py_UCS4)((const Py_UCS1 *)(t).data)[i]             \
                                      : PyUnicode_READ((t).kind, (t).data, (i)))

static int digits(Text t, Py_ssize_t at, int n, int *out) {
    int value = 0;
    for (int i = 0; i < n; i++) {
        Py_UCS4 c = AT(t, at + i);
        if (c < '0' || c > '9') return 0;
        value = value * 10 + (int)(c - '0');
    }
    *out = value;
    return 1;
}

/* An int of the plain shape, or NULL without an error (not plain). */
static PyObject *read_int(Text t, Py_ssize_t start, Py_ssize_t end) {
    int negative = 0;
    if (start < end && AT(t, start) == '-') {
        negative = 1;
        start++;
    }
    Py_ssize_t n = end - start;
    if (n < 1 || n > 18) return NULL;
    long long value = 0;
    for (Py_ssize_t i = start; i < end; i++) {
        Py_UCS4 c = AT(t, i);
        if (c < '0' || c > '9') return NULL;
        value = value * 10 + (long long)(c - '0');
    }
    return PyLong_FromLongLong(negative ? -value : value);
}

typedef struct {
    int parts[7];
    PyObject *value; /* the last timestamp made (a new reference), reused while equal */
} Stamp;

/* A timestamp of the plain shape, or NULL (an error set only for a memory error). */
static PyObject *read_timestamp(Text t, Py_ssize_t start, Py_ssize_t end, Stamp *last) {
    Py_ssize_t n = end - start;
    int p[7] = {0, 0, 0, 0, 0, 0, 0};
    if (n < 19 || n == 20 || n > 26) return NULL;
    if (!digits(t, start, 4, &p[0]) || AT(t, start + 4) != '-' ||
        !digits(t, start + 5, 2, &p[1]) || AT(t, start + 7) != '-' ||
        !digits(t, start + 8, 2, &p[2]) ||
        (AT(t, start + 10) != ' ' && AT(t, start + 10) != 'T') ||
        !digits(t, start + 11, 2, &p[3]) || AT(t, start + 13) != ':' ||
        !digits(t, start + 14, 2, &p[4]) || AT(t, start + 16) != ':' ||
        !digits(t, start + 17, 2, &p[5]))
        return NULL;
    if (n > 19) {
        int fraction = 0;
        if (AT(t, start + 19) != '.' || !digits(t, start + 20, (int)(n - 20), &fraction))
            return NULL;
        for (Py_ssize_t i = n - 20; i < 6; i++) fraction *= 10;
        p[6] = fraction;
    }
    if (last->value != NULL && memcmp(p, last->parts, sizeof p) == 0) {
        Py_INCREF(last->value);
        return last->value;
    }
    PyObject *value = PyDateTime_FromDateAndTime(p[0], p[1], p[2], p[3], p[4], p[5], p[6]);
    if (value == NULL) {
        if (PyErr_ExceptionMatches(PyExc_ValueError) ||
            PyErr_ExceptionMatches(PyExc_OverflowError))
            PyErr_Clear(); /* not a date: the twin decides */
        return NULL;
    }
    Py_XDECREF(last->value);
    Py_INCREF(value);
    last->value = value;
    memcpy(last->parts, p, sizeof p);
    return value;
}

static PyObject *read_field(Text t, char kind, PyObject *text, Py_ssize_t start,
                            Py_ssize_t end, Stamp *last) {
    switch (kind) {
    case 1: return PyUnicode_Substring(text, start, end);
    case 2: return read_int(t, start, end);
    case 3: return read_timestamp(t, start, end, last);
    default:
        PyErr_SetString(PyExc_ValueError, "unknown column kind");
        return NULL;
    }
}

/* The end of the field starting at ``at``: the next delimiter, "\n" or the end of the text
 * (a tight loop over the bytes of a one-byte-per-character text, the common case). */
static inline Py_ssize_t field_end(Text t, Py_ssize_t at, Py_ssize_t length,
                                   Py_UCS4 delimiter) {
    if (t.kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *bytes = (const Py_UCS1 *)t.data;
        while (at < length && bytes[at] != delimiter && bytes[at] != '\n') at++;
        return at;
    }
    while (at < length) {
        Py_UCS4 c = AT(t, at);
        if (c == delimiter || c == '\n') break;
        at++;
    }
    return at;
}

/* Fills ``columns`` row by row; 1 when done, 0 when the batch is not plain, -1 on an error. */
static int split_into(PyObject *text, Py_UCS4 delimiter, Py_ssize_t width, Py_ssize_t count,
                      const char *kinds, PyObject *columns) {
    Text t = {PyUnicode_KIND(text), PyUnicode_DATA(text)};
    Py_ssize_t length = PyUnicode_GET_LENGTH(text), at = 0;
    Stamp last = {{0}, NULL};
    int outcome = 1;
    for (Py_ssize_t row = 0; row < count && outcome == 1; row++) {
        for (Py_ssize_t column = 0; column < width; column++) {
            Py_ssize_t start = at;
            at = field_end(t, at, length, delimiter);
            int last_column = column == width - 1;
            Py_UCS4 ender = at < length ? AT(t, at) : 0;
            int ends_line = at == length ? row == count - 1 : ender == '\n' && row < count - 1;
            if (last_column ? !ends_line : ender != delimiter || at == length) {
                outcome = 0;
                break;
            }
            if (kinds[column]) {
                PyObject *value = read_field(t, kinds[column], text, start, at, &last);
                if (value == NULL) {
                    outcome = PyErr_Occurred() ? -1 : 0;
                    break;
                }
                PyList_SET_ITEM(PyList_GET_ITEM(columns, column), row, value);
            }
            at++;
        }
    }
    Py_XDECREF(last.value);
    return outcome;
}

static PyObject *split_columns(PyObject *self, PyObject *args) {
    PyObject *text;
    int delimiter;
    Py_ssize_t width, count, n_kinds;
    const char *kinds;
    if (!PyArg_ParseTuple(args, "UCnny#", &text, &delimiter, &width, &count, &kinds, &n_kinds))
        return NULL;
    if (n_kinds != width || width < 1 || count < 1 || delimiter == '\n') {
        PyErr_SetString(PyExc_ValueError, "split_columns: bad width, count or delimiter");
        return NULL;
    }
    PyObject *columns = PyList_New(width);
    if (columns == NULL) return NULL;
    for (Py_ssize_t i = 0; i < width; i++) {
        PyObject *column = kinds[i] ? PyList_New(count) : Py_NewRef(Py_None);
        if (column == NULL) {
            Py_DECREF(columns);
            return NULL;
        }
        PyList_SET_ITEM(columns, i, column);
    }
    int outcome = split_into(text, (Py_UCS4)delimiter, width, count, kinds, columns);
    if (outcome == 1) return columns;
    Py_DECREF(columns); /* lists partly filled hold NULLs, which list_dealloc skips */
    if (outcome < 0) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"split_columns", split_columns, METH_VARARGS,
     "split_columns(text, delimiter, width, count, kinds) -> columns or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cformats",
                                    "The csv format's batch split in C (issue 33).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__cformats(void) {
    PyDateTime_IMPORT;
    if (PyDateTimeAPI == NULL) return NULL;
    return PyModule_Create(&module);
}
