/* The RocksDB backend's entry keys for a batch of keys, in C (issue 31).
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

static PyMethodDef methods[] = {
    {"entry_keys", (PyCFunction)(void (*)(void))entry_keys, METH_FASTCALL,
     "entry_keys(keys, state_id, max_parallelism, other) -> list of RocksDB entry keys"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_crocks",
    "The RocksDB backend's entry keys for a batch, in C (see the source's header).", -1,
    methods,
};

PyMODINIT_FUNC
PyInit__crocks(void)
{
    crc_init();
    return PyModule_Create(&module);
}
