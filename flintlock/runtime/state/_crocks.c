/* The RocksDB backend's entry keys for a batch of keys, and its state values, in C (issue 31).
 *
 * entry_keys(keys, state_id, max_parallelism, other) -> list[bytes]
 *
 * For each key: the RocksDB key of its entry in one state, exactly the bytes the Python twin
 * (RocksDBKeyedStateBackend._entry_keys_py) gives:
 *
 *     key group (2 bytes, big endian) | state_id | len (4 bytes, big endian) | canonical(key)
 *
 * A key whose type is exactly int and whose value fits in 64 bits is encoded here: its key
 * group is keygroups.key_group_index's (CRC-32 of the 8-byte little-endian form, the
 * xor-shift-multiply spreading round, modulo max_parallelism) and its canonical form
 * canonical_keys.encode_key's ("i", the byte count, the minimal big-endian two's complement
 * bytes as int.to_bytes((bit_length + 8) // 8, "big", signed=True) gives them). Any other key
 * goes to ``other(key)``, which returns the pair (2-byte key group, len + canonical bytes).
 *
 * No state, no I/O; called on the task thread with the GIL held. The property test
 * tests/unit/state/test_rocksdb_batches.py holds this and the Python twin equal.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static uint32_t crc_table[256];

static void
crc_init(void)
{
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) {
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        }
        crc_table[n] = c;
    }
}

/* zlib.crc32 of the 8-byte little-endian form of v. */
static uint32_t
crc32_int64(int64_t v)
{
    uint64_t u = (uint64_t)v;
    uint32_t c = 0xFFFFFFFFu;
    for (int i = 0; i < 8; i++) {
        c = crc_table[(c ^ (uint32_t)(u & 0xFF)) & 0xFF] ^ (c >> 8);
        u >>= 8;
    }
    return c ^ 0xFFFFFFFFu;
}

static unsigned
key_group(int64_t v, unsigned long max_parallelism)
{
    uint32_t value = crc32_int64(v);
    value = (uint32_t)(((uint64_t)(value ^ (value >> 16)) * 0x45D9F3Bu) & 0xFFFFFFFFu);
    value ^= value >> 16;
    return (unsigned)(value % max_parallelism);
}

/* int.to_bytes((bit_length + 8) // 8, "big", signed=True) into out; returns the count. */
static int
canonical_int(int64_t v, unsigned char *out)
{
    uint64_t magnitude = v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
    int bits = magnitude == 0 ? 0 : 64 - __builtin_clzll(magnitude);
    int n = (bits + 8) / 8;
    uint64_t u = (uint64_t)v;
    for (int i = n - 1; i >= 0; i--) {
        out[i] = i >= n - 8 ? (unsigned char)(u & 0xFF) : (v < 0 ? 0xFF : 0x00);
        if (i >= n - 8) {
            u >>= 8;
        }
    }
    return n;
}

static PyObject *
int_entry(int64_t v, const char *state_id, Py_ssize_t id_len, unsigned long max_parallelism)
{
    unsigned char data[9];
    int n = canonical_int(v, data);
    unsigned group = key_group(v, max_parallelism);
    PyObject *out = PyBytes_FromStringAndSize(NULL, 2 + id_len + 6 + n);
    if (out == NULL) {
        return NULL;
    }
    unsigned char *p = (unsigned char *)PyBytes_AS_STRING(out);
    p[0] = (unsigned char)(group >> 8);
    p[1] = (unsigned char)(group & 0xFF);
    memcpy(p + 2, state_id, (size_t)id_len);
    p += 2 + id_len;
    p[0] = 0;
    p[1] = 0;
    p[2] = 0;
    p[3] = (unsigned char)(2 + n);
    p[4] = 'i';
    p[5] = (unsigned char)n;
    memcpy(p + 6, data, (size_t)n);
    return out;
}

static PyObject *
other_entry(PyObject *other, PyObject *key, PyObject *state_id)
{
    PyObject *pair = PyObject_CallOneArg(other, key);
    if (pair == NULL) {
        return NULL;
    }
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2
            || !PyBytes_Check(PyTuple_GET_ITEM(pair, 0))
            || !PyBytes_Check(PyTuple_GET_ITEM(pair, 1))) {
        Py_DECREF(pair);
        PyErr_SetString(PyExc_TypeError, "other(key) must return a pair of bytes");
        return NULL;
    }
    PyObject *group = PyTuple_GET_ITEM(pair, 0), *suffix = PyTuple_GET_ITEM(pair, 1);
    Py_ssize_t g = PyBytes_GET_SIZE(group), s = PyBytes_GET_SIZE(state_id);
    Py_ssize_t x = PyBytes_GET_SIZE(suffix);
    PyObject *out = PyBytes_FromStringAndSize(NULL, g + s + x);
    if (out != NULL) {
        char *p = PyBytes_AS_STRING(out);
        memcpy(p, PyBytes_AS_STRING(group), (size_t)g);
        memcpy(p + g, PyBytes_AS_STRING(state_id), (size_t)s);
        memcpy(p + g + s, PyBytes_AS_STRING(suffix), (size_t)x);
    }
    Py_DECREF(pair);
    return out;
}

static PyObject *
entry_keys(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError,
                        "entry_keys(keys, state_id, max_parallelism, other) takes 4 arguments");
        return NULL;
    }
    PyObject *keys = args[0], *state_id = args[1], *other = args[3];
    if (!PyBytes_Check(state_id)) {
        PyErr_SetString(PyExc_TypeError, "state_id must be bytes");
        return NULL;
    }
    unsigned long max_parallelism = PyLong_AsUnsignedLong(args[2]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    if (max_parallelism == 0 || max_parallelism > 65536) {
        PyErr_SetString(PyExc_ValueError, "max_parallelism must be in 1..65536");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(keys, "keys must be a sequence");
    if (seq == NULL) {
        return NULL;
    }
    Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
    PyObject *out = PyList_New(count);
    if (out == NULL) {
        Py_DECREF(seq);
        return NULL;
    }
    const char *id = PyBytes_AS_STRING(state_id);
    Py_ssize_t id_len = PyBytes_GET_SIZE(state_id);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *key = PySequence_Fast_GET_ITEM(seq, i), *entry = NULL;
        if (PyLong_CheckExact(key)) {
            int overflow = 0;
            long long v = PyLong_AsLongLongAndOverflow(key, &overflow);
            if (v == -1 && PyErr_Occurred()) {
                goto failed;
            }
            entry = overflow ? other_entry(other, key, state_id)
                             : int_entry((int64_t)v, id, id_len, max_parallelism);
        } else {
            entry = other_entry(other, key, state_id);
        }
        if (entry == NULL) {
            goto failed;
        }
        PyList_SET_ITEM(out, i, entry);
    }
    Py_DECREF(seq);
    return out;
failed:
    Py_DECREF(seq);
    Py_DECREF(out);
    return NULL;
}

/* ---- State values (issue 31): the compact format of runtime/state/values.py ----
 *
 * encode_value(fallback, value) -> bytes   compact form, else fallback(value)
 * decode_value(fallback, data) -> object   compact decoded here, else fallback(data)
 * (the fallback first, so that functools.partial binds it)
 * fold(entries, records, stored, reduce, dumps, loads) -> list   values.fold_py in C
 * fill_batch(stored, put, delete) -> None   values.fill_batch_py in C
 * sorted_distinct(entries) -> list   sorted(set(entries)), values.sorted_distinct_py
 *
 * The format is in values.py's docstring; values.encode_value_py / decode_value_py / fold_py
 * are the twins, held equal by tests/unit/state/test_rocksdb_values.py.
 */

static PyObject *format_error = NULL;

static void
set_format_error(const char *detail)
{
    if (format_error == NULL) {
        PyObject *errors = PyImport_ImportModule("flintlock.runtime.state.errors");
        if (errors != NULL) {
            format_error = PyObject_GetAttrString(errors, "StateValueFormatError");
            Py_DECREF(errors);
        }
        if (format_error == NULL) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, detail);
            return;
        }
    }
    PyObject *text = PyUnicode_FromString(detail);
    if (text == NULL) {
        return;
    }
    PyObject *error = PyObject_CallOneArg(format_error, text);
    Py_DECREF(text);
    if (error != NULL) {
        PyErr_SetObject(format_error, error);
        Py_DECREF(error);
    }
}

/* (bit_length + 8) // 8 of v: the bytes of its minimal two's complement form, 1..8. */
static int
int_size(int64_t v)
{
    uint64_t magnitude = v < 0 ? ~(uint64_t)v : (uint64_t)v;
    int bits = magnitude == 0 ? 0 : 64 - __builtin_clzll(magnitude);
    return (bits + 8) / 8;
}

/* The size of one scalar's compact form, or -1 if it has none (no error set). A str's UTF-8
 * goes to *utf8 (owned by the str). */
static Py_ssize_t
field_size(PyObject *v, const char **utf8, Py_ssize_t *utf8_len)
{
    if (PyLong_CheckExact(v)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || (x == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return -1;
        }
        return 2 + int_size((int64_t)x);
    }
    if (PyFloat_CheckExact(v)) {
        return 9;
    }
    if (PyUnicode_CheckExact(v)) {
        *utf8 = PyUnicode_AsUTF8AndSize(v, utf8_len);
        if (*utf8 == NULL || *utf8_len > (Py_ssize_t)0xFFFFFFFF) {
            PyErr_Clear();
            return -1;
        }
        return 5 + *utf8_len;
    }
    if (v == Py_None) {
        return 1;
    }
    return -1;
}

static void
put_u64(unsigned char *p, uint64_t u)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (unsigned char)(u & 0xFF);
        u >>= 8;
    }
}

static uint64_t
get_u64(const unsigned char *p)
{
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--) {
        u = (u << 8) | p[i];
    }
    return u;
}

/* Writes one scalar whose field_size was checked; returns the end. */
static unsigned char *
write_field(unsigned char *p, PyObject *v, const char *utf8, Py_ssize_t utf8_len)
{
    if (PyLong_CheckExact(v)) {
        int64_t x = (int64_t)PyLong_AsLongLong(v);
        int n = int_size(x);
        uint64_t u = (uint64_t)x;
        p[0] = 'i';
        p[1] = (unsigned char)n;
        for (int k = 0; k < n; k++) {
            p[2 + k] = (unsigned char)(u & 0xFF);
            u >>= 8;
        }
        return p + 2 + n;
    }
    if (PyFloat_CheckExact(v)) {
        double d = PyFloat_AS_DOUBLE(v);
        uint64_t u;
        memcpy(&u, &d, 8);
        *p = 'd';
        put_u64(p + 1, u);
        return p + 9;
    }
    if (v == Py_None) {
        *p = 'n';
        return p + 1;
    }
    *p = 's';
    p[1] = (unsigned char)(utf8_len & 0xFF);
    p[2] = (unsigned char)((utf8_len >> 8) & 0xFF);
    p[3] = (unsigned char)((utf8_len >> 16) & 0xFF);
    p[4] = (unsigned char)((utf8_len >> 24) & 0xFF);
    memcpy(p + 5, utf8, (size_t)utf8_len);
    return p + 5 + utf8_len;
}

/* The compact bytes of v, or NULL with no error set if it has none. */
static PyObject *
compact(PyObject *v)
{
    const char *utf8 = NULL;
    Py_ssize_t utf8_len = 0;
    if (!PyTuple_CheckExact(v)) {
        Py_ssize_t size = field_size(v, &utf8, &utf8_len);
        if (size < 0) {
            return NULL;
        }
        PyObject *out = PyBytes_FromStringAndSize(NULL, 1 + size);
        if (out != NULL) {
            unsigned char *p = (unsigned char *)PyBytes_AS_STRING(out);
            p[0] = 0x01;
            write_field(p + 1, v, utf8, utf8_len);
        }
        return out;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(v), total = 3;
    if (n > 255) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t size = field_size(PyTuple_GET_ITEM(v, i), &utf8, &utf8_len);
        if (size < 0) {
            return NULL;
        }
        total += size;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, total);
    if (out == NULL) {
        return NULL;
    }
    unsigned char *p = (unsigned char *)PyBytes_AS_STRING(out);
    p[0] = 0x01;
    p[1] = 't';
    p[2] = (unsigned char)n;
    p += 3;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(v, i);
        if (PyUnicode_CheckExact(item)) {
            utf8 = PyUnicode_AsUTF8AndSize(item, &utf8_len);  /* cached: cannot fail now */
        }
        p = write_field(p, item, utf8, utf8_len);
    }
    return out;
}

static PyObject *
encode(PyObject *v, PyObject *fallback)
{
    PyObject *out = compact(v);
    if (out == NULL && !PyErr_Occurred()) {
        out = PyObject_CallOneArg(fallback, v);
    }
    return out;
}

/* Decodes one scalar at data[*at]; advances *at. NULL with the format error on bad data. */
static PyObject *
scalar(const unsigned char *data, Py_ssize_t len, Py_ssize_t *at)
{
    Py_ssize_t i = *at;
    if (i + 2 <= len && data[i] == 'i' && data[i + 1] >= 1 && data[i + 1] <= 8
            && i + 2 + data[i + 1] <= len) {
        int n = data[i + 1];
        uint64_t u = 0;
        for (int k = n - 1; k >= 0; k--) {
            u = (u << 8) | data[i + 2 + k];
        }
        if (n < 8 && (data[i + 1 + n] & 0x80)) {  /* sign-extend */
            u |= ~(uint64_t)0 << (8 * n);
        }
        *at = i + 2 + n;
        return PyLong_FromLongLong((long long)u);
    }
    if (i < len && data[i] == 'd' && i + 9 <= len) {
        uint64_t u = get_u64(data + i + 1);
        double d;
        memcpy(&d, &u, 8);
        *at = i + 9;
        return PyFloat_FromDouble(d);
    }
    if (i < len && data[i] == 's' && i + 5 <= len) {
        Py_ssize_t size = (Py_ssize_t)data[i + 1] | ((Py_ssize_t)data[i + 2] << 8)
                          | ((Py_ssize_t)data[i + 3] << 16) | ((Py_ssize_t)data[i + 4] << 24);
        if (i + 5 + size <= len) {
            PyObject *s = PyUnicode_DecodeUTF8((const char *)data + i + 5, size, "strict");
            if (s == NULL) {
                PyErr_Clear();
                set_format_error("a string field is not UTF-8");
                return NULL;
            }
            *at = i + 5 + size;
            return s;
        }
    }
    if (i < len && data[i] == 'n') {
        *at = i + 1;
        Py_RETURN_NONE;
    }
    char detail[64];
    snprintf(detail, sizeof detail, "bad or truncated field at byte %zd", i);
    set_format_error(detail);
    return NULL;
}

static PyObject *decode_bytes(PyObject *bytes, PyObject *fallback);

static PyObject *
decode(PyObject *data, PyObject *fallback)
{
    if (PyBytes_Check(data)) {
        return decode_bytes(data, fallback);
    }
    PyObject *bytes = PyBytes_FromObject(data);  /* a memoryview, a bytearray */
    if (bytes == NULL) {
        return NULL;
    }
    PyObject *out = decode_bytes(bytes, fallback);
    Py_DECREF(bytes);
    return out;
}

static PyObject *
decode_bytes(PyObject *bytes, PyObject *fallback)
{
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(bytes);
    Py_ssize_t len = PyBytes_GET_SIZE(bytes), at;
    if (len == 0 || data[0] != 0x01) {
        return PyObject_CallOneArg(fallback, bytes);
    }
    PyObject *value;
    if (len >= 3 && data[1] == 't') {
        Py_ssize_t n = data[2];
        value = PyTuple_New(n);
        if (value == NULL) {
            return NULL;
        }
        at = 3;
        for (Py_ssize_t k = 0; k < n; k++) {
            PyObject *item = scalar(data, len, &at);
            if (item == NULL) {
                Py_DECREF(value);
                return NULL;
            }
            PyTuple_SET_ITEM(value, k, item);
        }
    } else {
        at = 1;
        value = scalar(data, len, &at);
        if (value == NULL) {
            return NULL;
        }
    }
    if (at != len) {
        Py_DECREF(value);
        char detail[64];
        snprintf(detail, sizeof detail, "%zd bytes after the value", len - at);
        set_format_error(detail);
        return NULL;
    }
    return value;
}

static PyObject *
encode_value(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "encode_value(fallback, value) takes 2 arguments");
        return NULL;
    }
    return encode(args[1], args[0]);
}

static PyObject *
decode_value(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "decode_value(fallback, data) takes 2 arguments");
        return NULL;
    }
    return decode(args[1], args[0]);
}

/* One record of fold: the new accumulator (a new reference), stored[entry] updated. */
static PyObject *
fold_one(PyObject *entry, PyObject *record, PyObject *stored, PyObject *reduce,
         PyObject *dumps, PyObject *loads)
{
    PyObject *data = PyDict_GetItemWithError(stored, entry), *acc, *encoded;
    if (data == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetObject(PyExc_KeyError, entry);
        }
        return NULL;
    }
    if (data == Py_None) {
        acc = Py_NewRef(record);
    } else {
        PyObject *previous = decode(data, loads);
        if (previous == NULL) {
            return NULL;
        }
        PyObject *call_args[2] = {previous, record};
        acc = PyObject_Vectorcall(reduce, call_args, 2, NULL);
        Py_DECREF(previous);
        if (acc == NULL) {
            return NULL;
        }
    }
    encoded = acc == Py_None ? Py_NewRef(Py_None) : encode(acc, dumps);
    if (encoded == NULL || PyDict_SetItem(stored, entry, encoded) < 0) {
        Py_XDECREF(encoded);
        Py_DECREF(acc);
        return NULL;
    }
    Py_DECREF(encoded);
    return acc;
}

static PyObject *
fold(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6 || !PyList_CheckExact(args[0]) || !PyList_CheckExact(args[1])
            || !PyDict_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "fold(entries: list, records: list, stored: dict, reduce, dumps, loads)");
        return NULL;
    }
    PyObject *entries = args[0], *records = args[1];
    Py_ssize_t n = PyList_GET_SIZE(entries);
    if (PyList_GET_SIZE(records) != n) {
        PyErr_SetString(PyExc_ValueError, "entries and records differ in length");
        return NULL;
    }
    PyObject *out = PyList_New(n);
    if (out == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        /* the reduce may change the lists: re-check the bounds, hold the items */
        if (i >= PyList_GET_SIZE(entries) || i >= PyList_GET_SIZE(records)) {
            PyErr_SetString(PyExc_RuntimeError, "entries or records changed during fold");
            Py_DECREF(out);
            return NULL;
        }
        PyObject *entry = Py_NewRef(PyList_GET_ITEM(entries, i));
        PyObject *record = Py_NewRef(PyList_GET_ITEM(records, i));
        PyObject *acc = fold_one(entry, record, args[2], args[3], args[4], args[5]);
        Py_DECREF(entry);
        Py_DECREF(record);
        if (acc == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, acc);
    }
    return out;
}

/* fill_batch(stored, put, delete): put(key, data) for each entry of the dict stored, or
 * delete(key) where data is None, in the dict's order (values.fill_batch_py is the twin). */
static PyObject *
fill_batch(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyDict_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "fill_batch(stored: dict, put, delete)");
        return NULL;
    }
    PyObject *stored = args[0], *key, *data;
    Py_ssize_t pos = 0;
    Py_ssize_t size = PyDict_GET_SIZE(stored);
    while (PyDict_Next(stored, &pos, &key, &data)) {
        PyObject *call_args[2] = {key, data}, *result;
        Py_INCREF(key);
        Py_INCREF(data);
        result = data == Py_None ? PyObject_Vectorcall(args[2], call_args, 1, NULL)
                                 : PyObject_Vectorcall(args[1], call_args, 2, NULL);
        Py_DECREF(key);
        Py_DECREF(data);
        if (result == NULL) {
            return NULL;
        }
        Py_DECREF(result);
        if (PyDict_GET_SIZE(stored) != size) {
            PyErr_SetString(PyExc_RuntimeError, "stored changed size during fill_batch");
            return NULL;
        }
    }
    Py_RETURN_NONE;
}

/* sorted_distinct(entries: list[bytes]) -> list[bytes]: sorted(set(entries)) (the twin is
 * values.sorted_distinct_py), with memcmp instead of rich comparisons. */
static int
compare_bytes(const void *a, const void *b)
{
    PyObject *x = *(PyObject *const *)a, *y = *(PyObject *const *)b;
    Py_ssize_t nx = PyBytes_GET_SIZE(x), ny = PyBytes_GET_SIZE(y);
    int c = memcmp(PyBytes_AS_STRING(x), PyBytes_AS_STRING(y), (size_t)(nx < ny ? nx : ny));
    return c != 0 ? c : (nx > ny) - (nx < ny);
}

static PyObject *
sorted_distinct(PyObject *module, PyObject *entries)
{
    if (!PyList_CheckExact(entries)) {
        PyErr_SetString(PyExc_TypeError, "sorted_distinct(entries: list of bytes)");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(entries), kept = 0;
    PyObject **items = PyMem_New(PyObject *, n > 0 ? n : 1);
    if (items == NULL) {
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        items[i] = PyList_GET_ITEM(entries, i);
        if (!PyBytes_CheckExact(items[i])) {
            PyMem_Free(items);
            PyErr_SetString(PyExc_TypeError, "sorted_distinct: every entry must be bytes");
            return NULL;
        }
    }
    qsort(items, (size_t)n, sizeof(PyObject *), compare_bytes);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (kept == 0 || compare_bytes(&items[kept - 1], &items[i]) != 0) {
            items[kept++] = items[i];
        }
    }
    PyObject *out = PyList_New(kept);
    if (out != NULL) {
        for (Py_ssize_t i = 0; i < kept; i++) {
            PyList_SET_ITEM(out, i, Py_NewRef(items[i]));
        }
    }
    PyMem_Free(items);
    return out;
}

static PyMethodDef methods[] = {
    {"entry_keys", (PyCFunction)(void (*)(void))entry_keys, METH_FASTCALL,
     "entry_keys(keys, state_id, max_parallelism, other) -> list of RocksDB entry keys"},
    {"encode_value", (PyCFunction)(void (*)(void))encode_value, METH_FASTCALL,
     "encode_value(fallback, value) -> the stored bytes (values.encode_value_py)"},
    {"decode_value", (PyCFunction)(void (*)(void))decode_value, METH_FASTCALL,
     "decode_value(fallback, data) -> the stored value (values.decode_value_py)"},
    {"fold", (PyCFunction)(void (*)(void))fold, METH_FASTCALL,
     "fold(entries, records, stored, reduce, dumps, loads) -> accumulators (values.fold_py)"},
    {"sorted_distinct", (PyCFunction)sorted_distinct, METH_O,
     "sorted_distinct(entries) -> sorted(set(entries)) for a list of bytes"},
    {"fill_batch", (PyCFunction)(void (*)(void))fill_batch, METH_FASTCALL,
     "fill_batch(stored, put, delete): each entry to put or delete (values.fill_batch_py)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_crocks",
    "The RocksDB backend's entry keys and state values, in C (see the source's header).", -1,
    methods,
};

PyMODINIT_FUNC
PyInit__crocks(void)
{
    crc_init();
    return PyModule_Create(&module);
}
