/* JSON text written by the compiled twins (formats/kafka/_recordtable.c): a growable buffer, integers,
 * bytes as base64/hex strings and bytes as text strings, exactly as the Python twins write them
 * (binascii.b2a_base64, bytes.hex, and bytes.decode("utf-8", "backslashreplace") through orjson). */
#ifndef WIREINSPECT_JSONOUT_H
#define WIREINSPECT_JSONOUT_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    char *buf;
    Py_ssize_t len, cap;
} Out;

static int grow(Out *o, Py_ssize_t need) {
    if (o->len + need <= o->cap) return 0;
    Py_ssize_t cap = o->cap ? o->cap : 4096;
    while (cap < o->len + need) cap *= 2;
    char *b = PyMem_Realloc(o->buf, cap);
    if (!b) { PyErr_NoMemory(); return -1; }
    o->buf = b;
    o->cap = cap;
    return 0;
}

static inline void put(Out *o, const char *s, Py_ssize_t n) { memcpy(o->buf + o->len, s, n); o->len += n; }

/* (room for 20 characters checked by the caller) */
static inline void put_int(Out *o, int64_t v) {
    char tmp[24];
    int n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do { tmp[n++] = (char)('0' + u % 10); u /= 10; } while (u);
    if (v < 0) tmp[n++] = '-';
    while (n) o->buf[o->len++] = tmp[--n];
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char HEX[] = "0123456789abcdef";

/* A bytes value as a JSON string ('"' + base64 or hex + '"'). 0 ok, -1 error. */
static int put_bytes(Out *o, const unsigned char *s, Py_ssize_t n, int hex) {
    if (grow(o, (hex ? 2 * n : 4 * ((n + 2) / 3)) + 2) < 0) return -1;
    char *d = o->buf + o->len;
    *d++ = '"';
    if (hex) {
        for (Py_ssize_t i = 0; i < n; i++) { *d++ = HEX[s[i] >> 4]; *d++ = HEX[s[i] & 15]; }
    } else {
        Py_ssize_t i = 0;
        for (; i + 3 <= n; i += 3) {
            uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
            *d++ = B64[v >> 18]; *d++ = B64[(v >> 12) & 63]; *d++ = B64[(v >> 6) & 63]; *d++ = B64[v & 63];
        }
        if (n - i == 1) {
            uint32_t v = (uint32_t)s[i] << 16;
            *d++ = B64[v >> 18]; *d++ = B64[(v >> 12) & 63]; *d++ = '='; *d++ = '=';
        } else if (n - i == 2) {
            uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
            *d++ = B64[v >> 18]; *d++ = B64[(v >> 12) & 63]; *d++ = B64[(v >> 6) & 63]; *d++ = '=';
        }
    }
    *d++ = '"';
    o->len = d - o->buf;
    return 0;
}

/* What a byte starts, for put_text: 0 itself (printable ASCII but '"' and '\\'), 1 a JSON escape, 2-4 a
 * UTF-8 sequence of that many bytes (to check), 5 nothing (a continuation byte, C0, C1, F5-FF). */
static const unsigned char TEXT_CLASS[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
    5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
    5, 5, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5
};

/* The escape of byte c (class 1: JSON's; any other: \\xNN, backslashreplace's \xNN with its backslash
 * escaped) at d; returns the characters written. */
static inline int text_escape(char *d, unsigned char c) {
    if (TEXT_CLASS[c] != 1) {
        d[0] = '\\'; d[1] = '\\'; d[2] = 'x'; d[3] = HEX[c >> 4]; d[4] = HEX[c & 15];
        return 5;
    }
    d[0] = '\\';
    switch (c) {
    case '"': d[1] = '"'; return 2;
    case '\\': d[1] = '\\'; return 2;
    case '\n': d[1] = 'n'; return 2;
    case '\r': d[1] = 'r'; return 2;
    case '\t': d[1] = 't'; return 2;
    case '\b': d[1] = 'b'; return 2;
    case '\f': d[1] = 'f'; return 2;
    default: d[1] = 'u'; d[2] = '0'; d[3] = '0'; d[4] = HEX[c >> 4]; d[5] = HEX[c & 15]; return 6;
    }
}

/* Whether s[0..k) (k = 2..4, s[0] of that class, k bytes there) is a well-formed UTF-8 sequence (no
 * overlongs, no surrogates, nothing past U+10FFFF: the strict decoder's rule). */
static inline int utf8_ok(const unsigned char *s, int k) {
    unsigned char c = s[0];
    if ((s[1] & 0xC0) != 0x80) return 0;
    if (k == 2) return 1;
    if (c == 0xE0 && s[1] < 0xA0) return 0;
    if (c == 0xED && s[1] > 0x9F) return 0;
    if (c == 0xF0 && s[1] < 0x90) return 0;
    if (c == 0xF4 && s[1] > 0x8F) return 0;
    if ((s[2] & 0xC0) != 0x80) return 0;
    return k == 3 || (s[3] & 0xC0) == 0x80;
}

/* The length of the well-formed UTF-8 sequence at s[0..n) (1-4), or 0 when s[0] starts none. */
static inline int utf8_len(const unsigned char *s, Py_ssize_t n) {
    unsigned char k = TEXT_CLASS[s[0]];
    if (k < 2) return s[0] < 0x80;
    if (k == 5 || n < k) return 0;
    return utf8_ok(s, k) ? k : 0;
}

/* Bytes as a JSON string of their text: UTF-8, each byte of an undecodable sequence as the four
 * characters \xNN (backslashreplace, whose backslash JSON escapes), JSON's escapes for '"', '\' and
 * the control characters (as orjson and json.dumps(ensure_ascii=False) write them). 0 ok, -1 error.
 * (The maximal subpart of an ill-formed sequence is replaced byte by byte; the next byte is read
 * afresh: a continuation byte never starts a sequence, so this is the decoder's replacement.) */
static int put_text(Out *o, const unsigned char *s, Py_ssize_t n) {
    if (grow(o, 6 * n + 2) < 0) return -1; /* at most 6 characters a byte */
    char *d = o->buf + o->len;
    *d++ = '"';
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        unsigned char k = TEXT_CLASS[c];
        if (k == 0) { *d++ = (char)c; i++; continue; }
        if (k >= 2 && k <= 4 && n - i >= k && utf8_ok(s + i, k)) { memcpy(d, s + i, k); d += k; i += k; continue; }
        d += text_escape(d, c);
        i++;
    }
    *d++ = '"';
    o->len = d - o->buf;
    return 0;
}

#endif
