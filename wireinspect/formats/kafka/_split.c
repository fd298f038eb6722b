/* The compiled twin of fastjson.split_plain (formats/kafka/fastjson.py): the records of a plain valid
 * magic-2 batch read straight from its bytes into Python lists, for `spark scan`'s columns
 * (spark/columns.fill_plain) and the internal topics' JSON fast path (internal/fastjson.py).
 *
 * Optional: `pip install .` builds it when a C compiler is there; without it the pure-Python function
 * does the same work. It returns exactly what the Python function returns (the same nine lists and the
 * bytes count, or None at the first irregularity, for the full decoder to take over), or
 * NotImplemented for what it leaves to Python (arguments of unusual types, an arithmetic result beyond
 * 64 bits); tests/spark/test_columns_compiled.py checks the two on generated and damaged batches.
 *
 * A record (org.apache.kafka.common.record.DefaultRecord): length varint, attributes int8,
 * timestampDelta varlong, offsetDelta varint, keyLength varint, key, valueLength varint, value,
 * header count varint, then per header: keyLength varint, key (UTF-8), valueLength varint, value.
 * Lengths of -1 are null (not for a header key); other negative lengths are irregular.
 *
 * Varints are read as fastjson._vi reads them (codec/varint.py): zig-zag, at most 5 bytes (10 for the
 * varlong timestampDelta), non-canonical encodings accepted, no int32/int64 range check (a 5-byte
 * varint may give up to 2^34 in size; a 10-byte varlong beyond 64 bits is left to Python). A read
 * past the record's end is irregular here: in Python it is either an IndexError or leaves the position
 * past the record's end (a slice past the end is shorter, not an error), both of which give None.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../../codec/varint.h"

#define VARINT(var, lim, most) do { int r_ = varint(d, &p, lim, most, &var); if (r_) { rc = r_; goto done; } } while (0)
#define FAIL(code) do { rc = (code); goto done; } while (0)

/* An exact int within 64 bits: 0 and *out; -1 for anything else (left to Python, no error set). */
static int as_i64(PyObject *o, int64_t *out) {
    if (!PyLong_CheckExact(o)) return -1;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) { PyErr_Clear(); return -1; }
    *out = (int64_t)v;
    return 0;
}

/* Append a new reference (NULL: an error is set) to `list`, stealing it. 0 ok, -1 error. */
static inline int append_new(PyObject *list, PyObject *o) {
    if (!o) return -1;
    int r = PyList_Append(list, o);
    Py_DECREF(o);
    return r;
}

/* A key or value of length `l` at *p (within `end`) appended to `list` as bytes, or None for -1.
 * 0 ok, 1 irregular, -1 error. */
static inline int take(PyObject *list, const unsigned char *d, Py_ssize_t *p, Py_ssize_t end, int64_t l) {
    if (l >= 0) {
        if (l > end - *p) return 1;
        if (append_new(list, PyBytes_FromStringAndSize((const char *)d + *p, (Py_ssize_t)l)) < 0) return -1;
        *p += (Py_ssize_t)l;
        return 0;
    }
    if (l == -1) return PyList_Append(list, Py_None) < 0 ? -1 : 0;
    return 1;
}

/* Header keys as str (UTF-8, backslashreplace), the first NKEYS distinct ones of a batch kept. */
#define NKEYS 16
typedef struct {
    const unsigned char *s;
    Py_ssize_t n;
    PyObject *str;
} Key;

static PyObject *key_str(Key *keys, int *nkeys, const unsigned char *s, Py_ssize_t n) {
    for (int i = 0; i < *nkeys; i++)
        if (keys[i].n == n && memcmp(keys[i].s, s, (size_t)n) == 0) return Py_NewRef(keys[i].str);
    PyObject *str = PyUnicode_DecodeUTF8((const char *)s, n, "backslashreplace");
    if (str && *nkeys < NKEYS) {
        keys[*nkeys] = (Key){s, n, Py_NewRef(str)};
        (*nkeys)++;
    }
    return str;
}

enum { POSITION, LENGTH, OFFSET, TIMESTAMP, KEY, VALUE, HCOUNT, HKEY, HVAL, NLISTS };

static PyObject *split_plain(PyObject *self, PyObject *args) {
    PyObject *h, *data, *p_obj, *stop_obj, *dbase_obj;
    if (!PyArg_UnpackTuple(args, "split_plain", 5, 5, &h, &data, &p_obj, &stop_obj, &dbase_obj)) return NULL;
    /* h: the batch header tuple (records.BATCH_NAMES): 0 baseOffset, 5 attributes, 6 lastOffsetDelta,
     * 7 baseTimestamp, 8 maxTimestamp, 12 recordsCount */
    int64_t base_offset, attrs, last_delta, base_ts = 0, count, p64, stop64, dbase = 0;
    if (!PyTuple_CheckExact(h) || PyTuple_GET_SIZE(h) < 13 || as_i64(PyTuple_GET_ITEM(h, 0), &base_offset) ||
        as_i64(PyTuple_GET_ITEM(h, 5), &attrs) || as_i64(PyTuple_GET_ITEM(h, 6), &last_delta) ||
        as_i64(PyTuple_GET_ITEM(h, 12), &count) || as_i64(p_obj, &p64) || as_i64(stop_obj, &stop64))
        Py_RETURN_NOTIMPLEMENTED;
    int log_append = (attrs & 0x08) != 0;
    PyObject *max_ts = PyTuple_GET_ITEM(h, 8); /* appended as it is, as Python does */
    if (!log_append && as_i64(PyTuple_GET_ITEM(h, 7), &base_ts)) Py_RETURN_NOTIMPLEMENTED;
    int has_base = dbase_obj != Py_None;
    if (has_base && as_i64(dbase_obj, &dbase)) Py_RETURN_NOTIMPLEMENTED;
    /* data: bytes, bytearray or a one-dimensional memoryview of unsigned bytes (what Python indexes alike) */
    if (PyMemoryView_Check(data)) {
        Py_buffer *b = PyMemoryView_GET_BUFFER(data);
        if (b->ndim != 1 || b->itemsize != 1 || (b->format && strcmp(b->format, "B") != 0))
            Py_RETURN_NOTIMPLEMENTED;
    } else if (!PyBytes_CheckExact(data) && !PyByteArray_CheckExact(data))
        Py_RETURN_NOTIMPLEMENTED;
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) { /* e.g. a released or strided memoryview */
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
    }
    if (p64 < 0 || stop64 > (int64_t)view.len) { /* negative indexes, or slices that end short: Python's */
        PyBuffer_Release(&view);
        Py_RETURN_NOTIMPLEMENTED;
    }
    const unsigned char *d = view.buf;
    Py_ssize_t stop = (Py_ssize_t)stop64;
    Py_ssize_t p = p64 > stop64 ? stop : (Py_ssize_t)p64;
    PyObject *lists[NLISTS] = {NULL};
    Key keys[NKEYS];
    int nkeys = 0;
    int rc = 0; /* 0 ok, 1 None, 2 NotImplemented, -1 error */
    int64_t od = 0, size = 0, n = 0;
    if (p64 > stop64) FAIL(1); /* the first record's end would be past stop (or p != stop) */
    for (int i = 0; i < NLISTS; i++)
        if (!(lists[i] = PyList_New(0))) FAIL(-1);
    /* No list is sized by count: the loop ends where the bytes do, whatever count says. */
    for (int64_t k = 0; k < count; k++) {
        Py_ssize_t start = p, end;
        int64_t ln, tsd, kl, vl, hc;
        int r;
        VARINT(ln, stop, 5);
        if (ln <= 0 || ln > stop - p) FAIL(1);
        end = p + (Py_ssize_t)ln;
        p += 1; /* attributes (unused) */
        VARINT(tsd, end, 10);
        VARINT(od, end, 5);
        VARINT(kl, end, 5);
        if ((r = take(lists[KEY], d, &p, end, kl))) FAIL(r);
        VARINT(vl, end, 5);
        if ((r = take(lists[VALUE], d, &p, end, vl))) FAIL(r);
        size += (kl > 0 ? kl : 0) + (vl > 0 ? vl : 0);
        VARINT(hc, end, 5);
        if (hc < 0) FAIL(1);
        for (int64_t j = 0; j < hc; j++) { /* each header takes 2 bytes at least: bounded by end */
            int64_t hkl, hvl;
            VARINT(hkl, end, 5);
            if (hkl < 0 || hkl > end - p) FAIL(1);
            if (append_new(lists[HKEY], key_str(keys, &nkeys, d + p, (Py_ssize_t)hkl)) < 0) FAIL(-1);
            p += (Py_ssize_t)hkl;
            VARINT(hvl, end, 5);
            if ((r = take(lists[HVAL], d, &p, end, hvl))) FAIL(r);
        }
        if (p != end) FAIL(1);
        int64_t pos = 0, off, ts = 0;
        if (has_base && __builtin_add_overflow(dbase, (int64_t)start, &pos)) FAIL(2);
        if (__builtin_add_overflow(base_offset, od, &off)) FAIL(2);
        if (!log_append && __builtin_add_overflow(base_ts, tsd, &ts)) FAIL(2);
        if (append_new(lists[HCOUNT], PyLong_FromLongLong(hc)) < 0 ||
            (has_base ? append_new(lists[POSITION], PyLong_FromLongLong(pos))
                      : PyList_Append(lists[POSITION], Py_None)) < 0 ||
            append_new(lists[LENGTH], PyLong_FromSsize_t(end - start)) < 0 ||
            append_new(lists[OFFSET], PyLong_FromLongLong(off)) < 0 ||
            (log_append ? PyList_Append(lists[TIMESTAMP], max_ts)
                        : append_new(lists[TIMESTAMP], PyLong_FromLongLong(ts))) < 0)
            FAIL(-1);
        n++;
    }
    if (p != stop || (n && od > last_delta)) FAIL(1);
done:
    PyBuffer_Release(&view);
    for (int i = 0; i < nkeys; i++) Py_DECREF(keys[i].str);
    PyObject *res = NULL;
    if (rc == 0 && (res = PyTuple_New(NLISTS + 1))) {
        PyObject *sz = PyLong_FromLongLong(size);
        if (!sz) Py_CLEAR(res);
        else {
            for (int i = 0; i < NLISTS; i++) {
                PyTuple_SET_ITEM(res, i, lists[i]);
                lists[i] = NULL;
            }
            PyTuple_SET_ITEM(res, NLISTS, sz);
        }
    } else if (rc == 1) res = Py_NewRef(Py_None);
    else if (rc == 2) res = Py_NewRef(Py_NotImplemented);
    for (int i = 0; i < NLISTS; i++) Py_XDECREF(lists[i]);
    return res;
}

static PyMethodDef methods[] = {
    {"split_plain", split_plain, METH_VARARGS,
     "split_plain(h, data, p, stop, dbase) -> (position, length, offset, timestamp, key, value, header counts, "
     "header keys, header values, size) | None | NotImplemented"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_split", NULL, -1, methods};

PyMODINIT_FUNC PyInit__split(void) { return PyModule_Create(&module); }
