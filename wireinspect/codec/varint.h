/* The zig-zag varint reader of the compiled twins (_fastjson.c, _split.c): as
 * fastjson._vi and codec/varint.py read them (at most `most` bytes; 5 for an int32, 10 for a varlong). */
#ifndef WIREINSPECT_VARINT_H
#define WIREINSPECT_VARINT_H

#include <Python.h>
#include <stdint.h>

/* Zig-zag varint of at most `most` bytes at *p, not past `end`. 0 ok, 1 irregular (None),
 * 2 beyond 64 bits (NotImplemented). */
static inline int varint(const unsigned char *d, Py_ssize_t *p, Py_ssize_t end, int most, int64_t *out) {
    uint64_t v = 0;
    int shift = 0;
    Py_ssize_t q = *p;
    for (int i = 0; i < most; i++) {
        if (q >= end) return 1;
        unsigned char b = d[q++];
        if (shift == 63 && (b & 0x7E)) return 2;
        v |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
            *p = q;
            return 0;
        }
        shift += 7;
    }
    return 1;
}

#endif
