/* The place-by-place loop of a hard purge's byte scan (dashboard/actions/grams.py), compiled.
 *
 * A window of a file is looked at as a word of `word` bytes (little-endian) at every offset
 * `every` divides (every = step * word); at each such place, the gram's key (the word, or a
 * hash of it and the word after it for a 16-byte gram) is looked up in the shape's tables.
 * The numpy pass does the same with whole-window arrays; this loop reads each place once and
 * writes only the places that pass, so it makes no temporary array.  Both answer with the
 * same (place, run) pairs: the run is the number of the run of equal grams a place's key
 * names, and everything after (the grams of a run, the whole-block compare) stays in Python.
 *
 * The interpreter is let go of in the loops: the parts of a piece are searched side by side.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
#define INLINE static inline __attribute__((always_inline))
#else
#define INLINE static inline
#endif

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)0)
#endif
#define AHEAD 16 /* places between a table byte asked for and its use */

#define M1 0x9E3779B97F4A7C15ULL /* the same multipliers as grams.py's MULTIPLIERS[:2] */
#define M2 0xC2B2AE3D27D4EB4FULL

/* The word of `word` bytes at p, little-endian whatever the machine (numpy reads "<u{word}"). The
 * loops below are written once and inlined for each word size, so `word` is a constant here. */
INLINE uint64_t
load(const unsigned char *p, int word)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    switch (word) {
    case 1:
        return *p;
    case 2: {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    default: {
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    }
#else
    uint64_t v = 0;
    for (int i = word - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
#endif
}

/* What the window's words give at place i: the key (the word, or the hash of two). */
INLINE uint64_t
key_at(const unsigned char *data, Py_ssize_t i, Py_ssize_t every, int word, int hashed)
{
    const unsigned char *p = data + i * every;
    if (hashed)
        return (load(p, 8) * M1) ^ (load(p + 8, 8) * M2);
    return load(p, word);
}

/* A shape's geometry and the places a window holds, checked once per call. */
typedef struct {
    int word, hashed, bits;
    Py_ssize_t every, places;
    uint64_t mult, keep; /* the second slot: ((key * mult) & keep) >> (8 * word - bits) */
} Shape;

static int
shape_of(Shape *s, Py_ssize_t size, int word, Py_ssize_t step, int hashed, uint64_t mult, int bits)
{
    if (!(word == 1 || word == 2 || word == 4 || word == 8) || step < 1 || (hashed && word != 8) ||
        bits < 1 || bits > 8 * word || bits > 56) {
        PyErr_SetString(PyExc_ValueError, "a shape this scan does not make");
        return -1;
    }
    Py_ssize_t words = size / word;
    s->word = word;
    s->hashed = hashed;
    s->bits = bits;
    s->every = step * word;
    s->places = words >= 1 ? (words - 1) / step : 0; /* places with a word after them */
    s->mult = mult;
    s->keep = word == 8 ? ~0ULL : (1ULL << (8 * word)) - 1;
    return 0;
}

/* The places that pass, as (place, run) pairs of int64, grown as they come (the loop runs
 * without the interpreter: raw allocation only). */
typedef struct {
    int64_t *at;
    Py_ssize_t n, cap;
} Pairs;

INLINE int
put(Pairs *p, Py_ssize_t place, Py_ssize_t run)
{
    if (p->n == p->cap) {
        Py_ssize_t cap = p->cap ? 2 * p->cap : 1024;
        int64_t *at = PyMem_RawRealloc(p->at, (size_t)cap * 2 * sizeof(int64_t));
        if (at == NULL)
            return -1;
        p->at = at;
        p->cap = cap;
    }
    p->at[2 * p->n] = place;
    p->at[2 * p->n + 1] = run;
    p->n++;
    return 0;
}

/* The pairs as bytes (the caller reads them with numpy), or the error the loop met. */
static PyObject *
answer(Pairs *p, int failed)
{
    PyObject *out = failed ? PyErr_NoMemory()
                           : PyBytes_FromStringAndSize((const char *)p->at, p->n * 2 * (Py_ssize_t)sizeof(int64_t));
    PyMem_RawFree(p->at);
    return out;
}

static int
big_enough(Py_buffer *b, Py_ssize_t need, const char *what)
{
    if (b->len < need) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes, %zd needed", what, b->len, need);
        return -1;
    }
    return 0;
}

INLINE int
slots_as(const Shape *s, const unsigned char *data, const int16_t *table, Pairs *out, int word, int hashed)
{
    int shift = 8 * word - s->bits;
    for (Py_ssize_t i = 0; i < s->places; i++) {
        uint64_t key = key_at(data, i, s->every, word, hashed);
        int16_t run = table[((key * s->mult) & s->keep) >> shift];
        if (run && put(out, i, run - 1) < 0)
            return -1;
    }
    return 0;
}

static int
slots_loop(const Shape *s, const unsigned char *data, const int16_t *table, Pairs *out)
{
    switch (s->word) { /* one copy of the loop a word size */
    case 1:
        return slots_as(s, data, table, out, 1, 0);
    case 2:
        return slots_as(s, data, table, out, 2, 0);
    case 4:
        return slots_as(s, data, table, out, 4, 0);
    default:
        return s->hashed ? slots_as(s, data, table, out, 8, 1) : slots_as(s, data, table, out, 8, 0);
    }
}

static PyObject *
slots(PyObject *self, PyObject *args)
{
    Py_buffer window, table;
    int word, hashed, bits, failed = 0;
    Py_ssize_t step;
    unsigned long long mult;
    Shape s;
    Pairs out = {NULL, 0, 0};
    PyObject *result = NULL;
    if (!PyArg_ParseTuple(args, "y*inpKiy*:slots", &window, &word, &step, &hashed, &mult, &bits, &table))
        return NULL;
    if (shape_of(&s, window.len, word, step, hashed, mult, bits) == 0 &&
        big_enough(&table, (Py_ssize_t)2 << bits, "table") == 0) {
        Py_BEGIN_ALLOW_THREADS
        failed = slots_loop(&s, window.buf, table.buf, &out);
        Py_END_ALLOW_THREADS
        result = answer(&out, failed);
    }
    PyBuffer_Release(&window);
    PyBuffer_Release(&table);
    return result;
}

INLINE int
bit(const unsigned char *table, uint64_t at)
{
    return (table[at >> 3] >> (at & 7)) & 1;
}

/* The first head not below `high` (heads sorted): a search whose steps do not branch, so an
 * unpredictable answer costs no mispredicted jumps (common words pass the tables often). */
INLINE Py_ssize_t
lower_bound(const uint64_t *heads, Py_ssize_t count, uint64_t high)
{
    const uint64_t *base = heads;
    if (count == 0)
        return 0;
    while (count > 1) {
        Py_ssize_t half = count / 2;
        base = base[half] < high ? base + half : base;
        count -= half;
    }
    return (base - heads) + (*base < high);
}

INLINE uint64_t
full_of(uint64_t key, int hashed)
{
    return hashed ? key : key * M1; /* one to one: the order the grams are sorted in */
}

INLINE int
flags_as(const Shape *s, const unsigned char *data, const unsigned char *first, const unsigned char *second,
         const uint64_t *heads, Py_ssize_t count, int low, Pairs *out, int word, int hashed)
{
    int shift = 8 * word - s->bits, top = 64 - s->bits;
    for (Py_ssize_t i = 0; i < s->places; i++) {
        /* The first table is larger than a core's cache when the grams are many: its byte for a
         * place some way ahead is asked for now, so the loop does not wait on each in turn. */
        if (i + AHEAD < s->places)
            PREFETCH(first + (full_of(key_at(data, i + AHEAD, s->every, word, hashed), hashed) >> top >> 3));
        uint64_t key = key_at(data, i, s->every, word, hashed);
        uint64_t full = full_of(key, hashed);
        if (!bit(first, full >> top) || !bit(second, ((key * s->mult) & s->keep) >> shift))
            continue;
        /* The run whose key is this hash's high bits, if any. */
        uint64_t high = full >> low;
        Py_ssize_t k = lower_bound(heads, count, high);
        if (k < count && heads[k] == high && put(out, i, k) < 0)
            return -1;
    }
    return 0;
}

static int
flags_loop(const Shape *s, const unsigned char *data, const unsigned char *first, const unsigned char *second,
           const uint64_t *heads, Py_ssize_t count, int low, Pairs *out)
{
#define FLAGS_AS(word, hashed) flags_as(s, data, first, second, heads, count, low, out, word, hashed)
    switch (s->word) { /* one copy of the loop a word size */
    case 1:
        return FLAGS_AS(1, 0);
    case 2:
        return FLAGS_AS(2, 0);
    case 4:
        return FLAGS_AS(4, 0);
    default:
        return s->hashed ? FLAGS_AS(8, 1) : FLAGS_AS(8, 0);
    }
#undef FLAGS_AS
}

static PyObject *
flags(PyObject *self, PyObject *args)
{
    Py_buffer window, first, second, heads;
    int word, hashed, bits, low, failed = 0;
    Py_ssize_t step;
    unsigned long long mult;
    Shape s;
    Pairs out = {NULL, 0, 0};
    PyObject *result = NULL;
    if (!PyArg_ParseTuple(args, "y*inpKiy*y*y*i:flags", &window, &word, &step, &hashed, &mult, &bits,
                          &first, &second, &heads, &low))
        return NULL;
    Py_ssize_t table = bits >= 3 ? (Py_ssize_t)1 << (bits - 3) : 1;
    if (shape_of(&s, window.len, word, step, hashed, mult, bits) == 0 &&
        big_enough(&first, table, "first table") == 0 && big_enough(&second, table, "second table") == 0) {
        if (low < 1 || low > 63)
            PyErr_SetString(PyExc_ValueError, "low: 1 to 63 bits");
        else {
            Py_BEGIN_ALLOW_THREADS
            failed = flags_loop(&s, window.buf, first.buf, second.buf, heads.buf, heads.len / 8, low, &out);
            Py_END_ALLOW_THREADS
            result = answer(&out, failed);
        }
    }
    PyBuffer_Release(&window);
    PyBuffer_Release(&first);
    PyBuffer_Release(&second);
    PyBuffer_Release(&heads);
    return result;
}

static PyMethodDef methods[] = {
    {"slots", slots, METH_VARARGS,
     "slots(window, word, step, hashed, mult, bits, table) -> bytes\n\n"
     "(place, run) as pairs of int64 for every place whose key's 16-bit slot in table is set;\n"
     "the run is the slot's value less one."},
    {"flags", flags, METH_VARARGS,
     "flags(window, word, step, hashed, mult, bits, first, second, heads, low) -> bytes\n\n"
     "(place, run) as pairs of int64 for every place whose key is set in both bit tables and\n"
     "whose hash's bits above low are a head (heads: sorted uint64); the run is that head's number."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "dashboard_scan_kernel",
    "The compiled place-by-place loop of the dashboard's byte scan (see dashboard/actions/grams.py).",
    -1, methods,
};

PyMODINIT_FUNC
PyInit_dashboard_scan_kernel(void)
{
    return PyModule_Create(&module);
}
