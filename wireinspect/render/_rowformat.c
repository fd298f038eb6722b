/* The compiled twin of the tree's row formatting (render/tree.py row_text: `fmt % args`): one packed
 * row's lines written from a template split into literal pieces and conversions, without Python's
 * generic %-formatting (its zero-padded hex and padded decimals cost more than everything else a row
 * needs). The conversions are the few row_text's templates use:
 *   'x'  %08x   an int >= 0, at least 8 lowercase hex digits, zero-padded
 *   'l'  %-5d   an int, left-aligned, padded with spaces to 5
 *   'd'  %d     an int
 *   's'  %s     a str
 *   '0'  %.0s   an argument that prints nothing
 * Any other argument (a bool, None, an int past 64 bits, a str with lone surrogates): NotImplemented,
 * and the caller formats with `%` (the pure-Python twin, the definition). */
#define PY_SSIZE_T_CLEAN
#include "../codec/jsonout.h"

static int put_dec(Out *o, PyObject *v, int pad) {
    if (!PyLong_CheckExact(v)) return 1;
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred())) { PyErr_Clear(); return 1; }
    if (grow(o, 24) < 0) return -1;
    Py_ssize_t at = o->len;
    put_int(o, x);
    for (Py_ssize_t n = o->len - at; n < pad; n++) o->buf[o->len++] = ' ';
    return 0;
}

static int put_hex8(Out *o, PyObject *v) {
    if (!PyLong_CheckExact(v)) return 1;
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || x < 0 || (x == -1 && PyErr_Occurred())) { PyErr_Clear(); return 1; }
    if (grow(o, 16) < 0) return -1;
    char tmp[16];
    int n = 0;
    unsigned long long u = (unsigned long long)x;
    do { tmp[n++] = HEX[u & 15]; u >>= 4; } while (u);
    while (n < 8) tmp[n++] = '0';
    while (n) o->buf[o->len++] = tmp[--n];
    return 0;
}

static PyObject *format_row(PyObject *self, PyObject *const *argv, Py_ssize_t nargs) {
    if (nargs != 3 || !PyTuple_CheckExact(argv[0]) || !PyBytes_CheckExact(argv[1])) Py_RETURN_NOTIMPLEMENTED;
    PyObject *pieces = argv[0];
    const char *codes = PyBytes_AS_STRING(argv[1]);
    Py_ssize_t ncodes = PyBytes_GET_SIZE(argv[1]);
    PyObject *seq = PySequence_Fast(argv[2], "a sequence");
    if (!seq) { PyErr_Clear(); Py_RETURN_NOTIMPLEMENTED; }
    PyObject **vals = PySequence_Fast_ITEMS(seq);
    Py_ssize_t nvals = PySequence_Fast_GET_SIZE(seq);
    if (PyTuple_GET_SIZE(pieces) != ncodes + 1 || nvals != ncodes) { Py_DECREF(seq); Py_RETURN_NOTIMPLEMENTED; }
    Out o = {0};
    int rc = 0;
    for (Py_ssize_t i = 0; i <= ncodes && rc == 0; i++) {
        PyObject *p = PyTuple_GET_ITEM(pieces, i);
        if (!PyBytes_CheckExact(p)) { rc = 1; break; }
        if (grow(&o, PyBytes_GET_SIZE(p)) < 0) { rc = -1; break; }
        put(&o, PyBytes_AS_STRING(p), PyBytes_GET_SIZE(p));
        if (i == ncodes) break;
        PyObject *v = vals[i];
        switch (codes[i]) {
        case 'x': rc = put_hex8(&o, v); break;
        case 'l': rc = put_dec(&o, v, 5); break;
        case 'd': rc = put_dec(&o, v, 0); break;
        case '0': break;
        case 's': {
            if (!PyUnicode_CheckExact(v)) { rc = 1; break; }
            Py_ssize_t n;
            const char *s = PyUnicode_AsUTF8AndSize(v, &n);
            if (!s) { PyErr_Clear(); rc = 1; break; }
            if (grow(&o, n) < 0) { rc = -1; break; }
            put(&o, s, n);
            break;
        }
        default: rc = 1;
        }
    }
    Py_DECREF(seq);
    PyObject *res = NULL;
    if (rc == 0) res = PyUnicode_DecodeUTF8(o.buf ? o.buf : "", o.len, "strict");
    else if (rc > 0) res = Py_NewRef(Py_NotImplemented);
    PyMem_Free(o.buf);
    return res;
}

static PyMethodDef methods[] = {
    {"format_row", (PyCFunction)(void (*)(void))format_row, METH_FASTCALL,
     "format_row(pieces, codes, args) -> str or NotImplemented: render/tree.py's row template applied to args"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rowformat", NULL, -1, methods};

PyMODINIT_FUNC PyInit__rowformat(void) { return PyModule_Create(&module); }
