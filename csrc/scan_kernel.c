/* The place-by-place loop of a hard purge's byte scan (dashboard/actions/grams.py), compiled.
 *
 * A window of a file is looked at as a word of `word` bytes (little-endian) at every offset
 * `every` divides (every = step * word); at each such place, the gram's key (the word, or a
 * hash of it and the word after it for a 16-byte gram) is looked up in the shape's tables.
 * The numpy pass does the same with whole-window arrays; this loop reads each place once and
 * writes only the places that pass, so it makes no temporary array.  Both answer with the
 * same (place, start, count) triples: the run of grams a place's key names, as where it begins
 * among the shape's grams in the order they are sorted and how many it holds; everything
 * after (the grams of a run, the whole-block compare) stays in Python.
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

/* The places that pass, as (place, start, count) triples of int64, grown as they come (the
 * loop runs without the interpreter: raw allocation only). */
typedef struct {
    int64_t *at;
    Py_ssize_t n, cap;
} Triples;

INLINE int
put(Triples *p, Py_ssize_t place, int64_t start, int64_t count)
{
    if (p->n == p->cap) {
        Py_ssize_t cap = p->cap ? 2 * p->cap : 1024;
        int64_t *at = PyMem_RawRealloc(p->at, (size_t)cap * 3 * sizeof(int64_t));
        if (at == NULL)
            return -1;
        p->at = at;
        p->cap = cap;
    }
    p->at[3 * p->n] = place;
    p->at[3 * p->n + 1] = start;
    p->at[3 * p->n + 2] = count;
    p->n++;
    return 0;
}

/* The triples as bytes (the caller reads them with numpy), or the error the loop met. */
static PyObject *
answer(Triples *p, int failed)
{
    PyObject *out = failed ? PyErr_NoMemory()
                           : PyBytes_FromStringAndSize((const char *)p->at, p->n * 3 * (Py_ssize_t)sizeof(int64_t));
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

/* Runs of grams by number (a slot's value less one): where each begins, how many it holds. */
typedef struct {
    const int64_t *start, *count;
    Py_ssize_t n;
} Runs;

INLINE int
slots_as(const Shape *s, const unsigned char *data, const int16_t *table, const Runs *runs, Triples *out,
         int word, int hashed)
{
    int shift = 8 * word - s->bits;
    for (Py_ssize_t i = 0; i < s->places; i++) {
        uint64_t key = key_at(data, i, s->every, word, hashed);
        Py_ssize_t run = table[((key * s->mult) & s->keep) >> shift] - 1;
        if (run >= 0 && run < runs->n && put(out, i, runs->start[run], runs->count[run]) < 0)
            return -1;
    }
    return 0;
}

static int
slots_loop(const Shape *s, const unsigned char *data, const int16_t *table, const Runs *runs, Triples *out)
{
    switch (s->word) { /* one copy of the loop a word size */
    case 1:
        return slots_as(s, data, table, runs, out, 1, 0);
    case 2:
        return slots_as(s, data, table, runs, out, 2, 0);
    case 4:
        return slots_as(s, data, table, runs, out, 4, 0);
    default:
        return s->hashed ? slots_as(s, data, table, runs, out, 8, 1) : slots_as(s, data, table, runs, out, 8, 0);
    }
}

static PyObject *
slots(PyObject *self, PyObject *args)
{
    Py_buffer window, table, start, count;
    int word, hashed, bits, failed = 0;
    Py_ssize_t step;
    unsigned long long mult;
    Shape s;
    Triples out = {NULL, 0, 0};
    PyObject *result = NULL;
    if (!PyArg_ParseTuple(args, "y*inpKiy*y*y*:slots", &window, &word, &step, &hashed, &mult, &bits, &table,
                          &start, &count))
        return NULL;
    Runs runs = {start.buf, count.buf, start.len / (Py_ssize_t)sizeof(int64_t)};
    if (shape_of(&s, window.len, word, step, hashed, mult, bits) == 0 &&
        big_enough(&table, (Py_ssize_t)2 << bits, "table") == 0 &&
        big_enough(&count, start.len, "counts") == 0) {
        Py_BEGIN_ALLOW_THREADS
        failed = slots_loop(&s, window.buf, table.buf, &runs, &out);
        Py_END_ALLOW_THREADS
        result = answer(&out, failed);
    }
    PyBuffer_Release(&window);
    PyBuffer_Release(&table);
    PyBuffer_Release(&start);
    PyBuffer_Release(&count);
    return result;
}

INLINE int
bit(const unsigned char *table, uint64_t at)
{
    return (table[at >> 3] >> (at & 7)) & 1;
}

/* The first of the heads (sorted, alike ones side by side) not below `high`: a search whose
 * steps do not branch, so an unpredictable answer costs no mispredicted jumps (common words
 * pass the tables often). */
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
         const uint64_t *heads, Py_ssize_t count, int low, Triples *out, int word, int hashed)
{
    int shift = 8 * word - s->bits, top = 64 - s->bits;
    for (Py_ssize_t i = 0; i < s->places; i++) {
        uint64_t key = key_at(data, i, s->every, word, hashed);
        uint64_t full = full_of(key, hashed);
        if (!bit(first, full >> top) || !bit(second, ((key * s->mult) & s->keep) >> shift))
            continue;
        /* The run of grams whose hashes agree with this one above the low bits, if any. */
        uint64_t high = full >> low;
        Py_ssize_t k = lower_bound(heads, count, high);
        if (k == count || heads[k] != high)
            continue;
        /* Most runs are one gram long; a longer one's end is searched for (high < 2**63: low is
         * one bit at least, so high + 1 does not wrap). */
        Py_ssize_t many = 1;
        if (k + 1 < count && heads[k + 1] == high)
            many = lower_bound(heads + k, count - k, high + 1);
        if (put(out, i, k, many) < 0)
            return -1;
    }
    return 0;
}

static int
flags_loop(const Shape *s, const unsigned char *data, const unsigned char *first, const unsigned char *second,
           const uint64_t *heads, Py_ssize_t count, int low, Triples *out)
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
    Triples out = {NULL, 0, 0};
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

/* A table of bits set at each value >> shift (values: 8-byte integers, the shifted ones under
 * the table's bits): filled in place, one bit at a time, with no array of flags a byte a bit to
 * pack afterwards, nor one of the shifted values. */
static PyObject *
fill(PyObject *self, PyObject *args)
{
    Py_buffer table, values;
    int shift;
    PyObject *result = NULL;
    if (!PyArg_ParseTuple(args, "w*y*i:fill", &table, &values, &shift))
        return NULL;
    const uint64_t *at = values.buf;
    Py_ssize_t n = values.len / (Py_ssize_t)sizeof(uint64_t), bad = -1;
    unsigned char *bits = table.buf;
    uint64_t size = 8 * (uint64_t)table.len;
    if (shift < 0 || shift > 63)
        PyErr_SetString(PyExc_ValueError, "shift: 0 to 63 bits");
    else {
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            uint64_t bit = at[i] >> shift;
            if (bit >= size) {
                bad = i;
                break;
            }
            bits[bit >> 3] |= (unsigned char)(1u << (bit & 7));
        }
        Py_END_ALLOW_THREADS
        if (bad >= 0)
            PyErr_Format(PyExc_IndexError, "value %zd: past the table's %zd bytes", bad, table.len);
        else
            result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&table);
    PyBuffer_Release(&values);
    return result;
}

static PyMethodDef methods[] = {
    {"slots", slots, METH_VARARGS,
     "slots(window, word, step, hashed, mult, bits, table, start, count) -> bytes\n\n"
     "(place, start, count) as triples of int64 for every place whose key's 16-bit slot in table\n"
     "is set: the slot's value less one numbers a run, begun at start[run], count[run] long."},
    {"flags", flags, METH_VARARGS,
     "flags(window, word, step, hashed, mult, bits, first, second, heads, low) -> bytes\n\n"
     "(place, start, count) as triples of int64 for every place whose key is set in both bit\n"
     "tables and whose hash's bits above low are among heads (sorted uint64): where they begin\n"
     "there and how many."},
    {"fill", fill, METH_VARARGS,
     "fill(table, values, shift) -> None\n\n"
     "Set the bit of table (bytes, little-endian bit order) at each value >> shift (8-byte ints)."},
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
