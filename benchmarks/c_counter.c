/* A Counter written in C, for benchmarks/metrics_cost.py --c-counter only (not part of
 * flintlock): what PyFlink's Counter API (inc(n=1), dec(n=1), get_count()) costs when `inc` is
 * a fast-call method of a C type instead of a Python method. docs/metrics.md, "Cost on the hot
 * path", and docs/decisions.md say why flintlock does not ship it. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef struct {
    PyObject_HEAD
    long long count;
} CounterObject;

static int add_argument(CounterObject *self, PyObject *const *args, Py_ssize_t nargs, int sign)
{
    long long n = 1;
    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError, "takes at most one argument (%zd given)", nargs);
        return -1;
    }
    if (nargs == 1) {
        n = PyLong_AsLongLong(args[0]);
        if (n == -1 && PyErr_Occurred()) {
            return -1;
        }
    }
    self->count += sign * n;
    return 0;
}

static PyObject *counter_inc(CounterObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (add_argument(self, args, nargs, 1) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *counter_dec(CounterObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (add_argument(self, args, nargs, -1) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *counter_get_count(CounterObject *self, PyObject *Py_UNUSED(ignored))
{
    return PyLong_FromLongLong(self->count);
}

static PyMethodDef counter_methods[] = {
    {"inc", (PyCFunction)(void (*)(void))counter_inc, METH_FASTCALL, "inc(n=1)"},
    {"dec", (PyCFunction)(void (*)(void))counter_dec, METH_FASTCALL, "dec(n=1)"},
    {"get_count", (PyCFunction)counter_get_count, METH_NOARGS, "get_count()"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject CounterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "c_counter.Counter",
    .tp_basicsize = sizeof(CounterObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_methods = counter_methods,
};

static struct PyModuleDef c_counter_module = {
    PyModuleDef_HEAD_INIT, "c_counter", NULL, -1, NULL, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_c_counter(void)
{
    if (PyType_Ready(&CounterType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&c_counter_module);
    if (module == NULL) {
        return NULL;
    }
    Py_INCREF(&CounterType);
    if (PyModule_AddObject(module, "Counter", (PyObject *)&CounterType) < 0) {
        Py_DECREF(&CounterType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
