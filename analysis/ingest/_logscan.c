/* One pass over a chunk of a plain-text training log: every `key <sep> number` pair of every line.

   Python's `re` reads such logs at ~13 MB/s and one regex pass per metric family caps polars at
   ~60 MB/s; a single hand-written scan of the bytes is what reaches grep-like speeds. The scanner
   knows no metric names: each candidate key is handed once per chunk to a Python callable that
   answers a family id (>= 0), -1, or a section code (<= -2) for a word that opens a section of a
   line, so naming stays in analysis/data/metric_names.toml. logscan_fallback.py is the same
   scanner in Python, for an install without a compiler; a test holds the two to one result.

   Per line: progress-bar rewrites (`\r`, or `#015` as CloudWatch writes it) reduce to the last state, ANSI colour is skipped, then
   a key is a run of [A-Za-z_][A-Za-z0-9_./-]*, optionally quoted, optionally the second word of a
   two-word name (`grad norm`, `Training Loss`; up to four words before `:`/`=`, `Loss RPN classifier:`),
   followed by `=`, `:` (or a full-width one), `|`, spaces or a comma right after it (`loss_rpn_cls,0.77`), an optional
   `[` (`Epoch [1][50/500]`; or a counter bracketed right after the name, `Epoch[3]`, `Epoch(3)`), an
   optional wrapper (`tensor(`, `np.float64(`), and a number (units such as `ms` or `%` end it), nan, inf or
   infinity; after a quoted key, a number quoted alone (`'loss': '0.52'`). An epoch's number may be followed by its batch counter (`Epoch [3][200/500]`), read as the step.
   The first value of each family per line wins. A lone word that opens
   a section (`| valid | loss 9.4`, `Epoch(val)`, `Test: [10/100]`) has the keys after it looked
   up as `val|loss`. Keras' `val_loss improved from 0.5 to 0.4` reads the second number. A line of three or
   more names apart by `|`, tabs, commas (a CSV header) or two spaces, two of them
   metrics, is a table header (YOLO, a Trainer's notebook table): the rows of numbers after it
   are read by column until a line with pairs (within a chunk: a table cut by a chunk edge loses
   its header, which YOLO repeats every epoch anyway). A known key with `=`/`:` and no value marks the
   line malformed. A number, one space and a name of one or two words before a comma or the line's end
   is a pair too, value first (darknet's `519.72 avg loss, 0.001 rate`). Lines holding one of the failure literals are reported so that Python can read
   their events. The GIL is released while scanning. */
#define _GNU_SOURCE   /* memrchr */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct { char *data; size_t len, cap; } Buf;

static int buf_put(Buf *b, const void *p, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->len + n) cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d) return -1;
        b->data = d; b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

/* Keys seen in this chunk -> family id (open addressing; keys are short ASCII). */
typedef struct { char *key; Py_ssize_t len; int fam; } Slot;
typedef struct { Slot *slots; size_t cap, used; } Table;

static uint64_t hash(const char *s, Py_ssize_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

typedef struct {
    Table table;
    PyObject *resolve;
    PyThreadState *ts;   /* saved while the GIL is released */
    int failed;
    int *last_line; int n_fams;   /* dedup: the last line each family was emitted on */
    Buf key;                      /* a key with its section prefix (`val|loss`) */
    uint8_t initial[256];         /* 1: some section word starts with this byte */
} Ctx;

static int table_grow(Table *t) {
    size_t cap = t->cap ? t->cap * 2 : 256;
    Slot *s = calloc(cap, sizeof(Slot));
    if (!s) return -1;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slots[i].key) continue;
        size_t j = hash(t->slots[i].key, t->slots[i].len) & (cap - 1);
        while (s[j].key) j = (j + 1) & (cap - 1);
        s[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = s; t->cap = cap;
    return 0;
}

/* The family of a key, asking Python (with the GIL) the first time a key is seen. */
static int family(Ctx *c, const char *k, Py_ssize_t n) {
    if (c->failed) return -1;
    if ((c->table.used + 1) * 2 > c->table.cap && table_grow(&c->table) < 0) { c->failed = 1; return -1; }
    size_t j = hash(k, n) & (c->table.cap - 1);
    while (c->table.slots[j].key) {
        Slot *s = &c->table.slots[j];
        if (s->len == n && memcmp(s->key, k, n) == 0) return s->fam;
        j = (j + 1) & (c->table.cap - 1);
    }
    PyEval_RestoreThread(c->ts);
    int fam = -1;
    PyObject *r = PyObject_CallFunction(c->resolve, "s#", k, n);
    if (r) { fam = (int)PyLong_AsLong(r); Py_DECREF(r); }
    if (PyErr_Occurred()) { c->failed = 1; fam = -1; }
    c->ts = PyEval_SaveThread();
    char *copy = malloc(n);
    if (!copy) { c->failed = 1; return -1; }
    memcpy(copy, k, n);
    c->table.slots[j] = (Slot){copy, n, fam};
    c->table.used++;
    if (fam >= c->n_fams) {
        int m = fam + 16;
        int *ll = realloc(c->last_line, m * sizeof(int));
        if (!ll) { c->failed = 1; return -1; }
        for (int i = c->n_fams; i < m; i++) ll[i] = -1;
        c->last_line = ll; c->n_fams = m;
    }
    return fam;
}

/* The family a key was given earlier in this chunk, -1 where it was never asked about (Python not asked). */
static int family_seen(Ctx *c, const char *k, Py_ssize_t n) {
    if (c->failed || !c->table.cap) return -1;
    size_t j = hash(k, n) & (c->table.cap - 1);
    while (c->table.slots[j].key) {
        Slot *s = &c->table.slots[j];
        if (s->len == n && memcmp(s->key, k, n) == 0) return s->fam;
        j = (j + 1) & (c->table.cap - 1);
    }
    return -1;
}

/* Character classes, filled once at import. */
enum { START = 1, KEYCH = 2 };
static uint8_t cls[256];

static void init_classes(void) {
    for (int ch = 0; ch < 256; ch++) {
        int start = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '_';
        int key = start || (ch >= '0' && ch <= '9') || ch == '.' || ch == '/' || ch == '-';
        cls[ch] = (start ? START : 0) | (key ? KEYCH : 0);
    }
}

static inline int is_start(unsigned char ch) { return cls[ch] & START; }
/* the word between a name and its counter: `Loss at step 5: x`, `Loss for Iter 1: x`, `loss in epoch 3: x` */
static int is_counter_preposition(const char *w, Py_ssize_t len)
{
    static const char *const words[] = {"at", "for", "in", "of", "on", "after"};
    for (size_t k = 0; k < sizeof words / sizeof *words; k++)
        if ((Py_ssize_t)strlen(words[k]) == len && !memcmp(w, words[k], (size_t)len)) return 1;
    return 0;
}
static inline int is_keych(unsigned char ch) { return cls[ch] & KEYCH; }
static inline int is_digit(unsigned char ch) { return ch >= '0' && ch <= '9'; }
static inline int is_blank(unsigned char ch) { return ch == ' ' || ch == '\t'; }

/* A line that is one name and one value apart by blanks (Lua Torch's `err     nan`): nothing else on it. */
static int lone_pair(const char *s, Py_ssize_t n, Py_ssize_t ws, Py_ssize_t end) {
    for (Py_ssize_t k = 0; k < ws; k++) if (!is_blank((unsigned char)s[k])) return 0;
    for (Py_ssize_t k = end; k < n; k++) if (!is_blank((unsigned char)s[k]) && s[k] != '\r') return 0;
    return 1;
}

/* A number at s[i..n): [-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?, nan, inf or infinity (not the start of a word; YAML's `.nan`),
   or MSVC's spelling of a non-finite value (`1.#INF`, `-1.#IND`, `1.#QNAN`, `1.#SNAN`, digits after). */
static inline __attribute__((always_inline)) int parse_number(const char *s, Py_ssize_t i, Py_ssize_t n, double *out, Py_ssize_t *end) {
    Py_ssize_t j = i;
    int neg = 0;
    if (j < n && (s[j] == '-' || s[j] == '+')) { neg = s[j] == '-'; j++; }
    /* YAML spells them `.nan`, `.inf`, `-.inf` (RLlib's result dump); a `.` before anything else still
       fails below, as it did (no digit follows it) */
    if (j + 4 <= n && s[j] == '.' && (s[j + 1] == 'n' || s[j + 1] == 'N' || s[j + 1] == 'i' || s[j + 1] == 'I')) j++;
    if (j + 3 <= n && (!memcmp(s + j, "nan", 3) || !memcmp(s + j, "NaN", 3) || !memcmp(s + j, "NAN", 3) ||
                       !memcmp(s + j, "inf", 3) || !memcmp(s + j, "Inf", 3) || !memcmp(s + j, "INF", 3))) {
        Py_ssize_t k = j + 3;
        if ((s[j] == 'i' || s[j] == 'I') && k + 5 <= n && (!memcmp(s + k, "inity", 5) || !memcmp(s + k, "INITY", 5)))
            k += 5;
        if (k < n && is_keych((unsigned char)s[k]) && s[k] != '.' && s[k] != '-' && s[k] != '/')
            return 0;
        *out = (s[j] == 'n' || s[j] == 'N') ? NAN : (neg ? -INFINITY : INFINITY);
        *end = k;
        return 1;
    }
    Py_ssize_t d0 = j;
    while (j < n && is_digit((unsigned char)s[j])) j++;
    Py_ssize_t int_digits = j - d0, frac_digits = 0;
    if (j < n && s[j] == '.') {
        Py_ssize_t f0 = ++j;
        while (j < n && is_digit((unsigned char)s[j])) j++;
        frac_digits = j - f0;
        if (!int_digits && !frac_digits) return 0;
    }
    if (!int_digits && !frac_digits) return 0;
    if (j - d0 == 2 && s[d0] == '1' && s[d0 + 1] == '.' && j < n && s[j] == '#') {   /* MSVC's `1.#INF00`, `-1.#IND`, `1.#QNAN0` */
        Py_ssize_t k = j + 1;
        int inf = k + 3 <= n && !memcmp(s + k, "INF", 3);
        if (inf || (k + 3 <= n && !memcmp(s + k, "IND", 3))) k += 3;
        else if (k + 4 <= n && (!memcmp(s + k, "QNAN", 4) || !memcmp(s + k, "SNAN", 4))) k += 4;
        else return 0;
        while (k < n && is_digit((unsigned char)s[k])) k++;
        *out = inf ? (neg ? -INFINITY : INFINITY) : NAN;
        *end = k;
        return 1;
    }
    Py_ssize_t mend = j;           /* the end of the mantissa */
    if (j < n && (s[j] == 'e' || s[j] == 'E')) {
        Py_ssize_t k = j + 1;
        if (k < n && (s[k] == '-' || s[k] == '+')) k++;
        if (k < n && is_digit((unsigned char)s[k])) {
            while (k < n && is_digit((unsigned char)s[k])) k++;
            j = k;
        }
    }
    /* Clinger's fast path: a mantissa below 2^53 and a power of ten up to 1e22 are both exact,
       so one multiplication or division rounds correctly. Anything else goes to strtod. */
    static const double pow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    uint64_t mant = 0;
    int digits = 0, exp10 = -(int)frac_digits;
    for (Py_ssize_t k = d0; k < mend; k++) {
        if (s[k] == '.') continue;
        if (++digits > 15) break;
        mant = mant * 10 + (uint64_t)(s[k] - '0');
    }
    if (digits <= 15 && mend < j) {   /* an exponent follows */
        int eneg = 0, ev = 0;
        Py_ssize_t k = mend + 1;
        if (s[k] == '-' || s[k] == '+') eneg = s[k++] == '-';
        for (; k < j && ev < 1000; k++) ev = ev * 10 + (s[k] - '0');
        exp10 += eneg ? -ev : ev;
    }
    if (digits <= 15 && exp10 >= -22 && exp10 <= 22) {
        double v = (double)mant;
        v = exp10 >= 0 ? v * pow10[exp10] : v / pow10[-exp10];
        *out = neg ? -v : v;
    } else {
        char tmp[64];
        Py_ssize_t len = j - i;
        if (len >= (Py_ssize_t)sizeof tmp) return 0;
        memcpy(tmp, s + i, len);
        tmp[len] = 0;
        *out = strtod(tmp, NULL);
    }
    *end = j;
    return 1;
}

/* Per family, the columns of its points; the step of each is the last one logged on or before
   its line in this chunk (NaN before the chunk's first), its row the ordinal of its metric line. */
typedef struct { Buf rows, lines, steps, values; } Column;

typedef struct {
    Column *cols; int n_cols;
    int32_t *line_fams; double *line_values; int32_t *line_idx;      /* the current line's pairs, and the */
    int line_n, line_cap;                                              /* index of each in its list (else 0) */
    double step;        /* the last step seen in this chunk, NaN before */
    double raw_first, raw_last, offset;   /* the step counter as logged, and what its restarts add */
    double raw_total, line_total;  /* the total the last step was printed out of (`Step [100/600]`), NaN if none;
                                      the current line's */
    double batch_epoch, batch_total, batch_base;   /* an epoch's batch counter: its epoch, total, the epochs before */
    int32_t rows;       /* metric lines so far */
    Buf hits;
    long malformed;
} Out;

static inline __attribute__((always_inline)) int line_add(Out *o, int32_t fam, double v, int32_t idx) {
    if (o->line_n == o->line_cap) {
        int cap = o->line_cap ? o->line_cap * 2 : 16;
        int32_t *f = realloc(o->line_fams, cap * sizeof *f);
        if (!f) return -1;
        o->line_fams = f;
        double *x = realloc(o->line_values, cap * sizeof *x);
        if (!x) return -1;
        o->line_values = x;
        int32_t *ix = realloc(o->line_idx, cap * sizeof *ix);
        if (!ix) return -1;
        o->line_idx = ix;
        o->line_cap = cap;
    }
    o->line_fams[o->line_n] = fam;
    o->line_idx[o->line_n] = idx;
    o->line_values[o->line_n++] = v;
    return 0;
}

/* The same name twice on a line, the second value non-finite (`mmilb loss: 0.0042 main loss: nan`): a NaN in
   any part of what the name measures makes it NaN, so it takes the place of the finite value read first. */
static void line_nonfinite(Out *o, int32_t fam, double v) {
    for (int k = 0; k < o->line_n; k++)
        if (o->line_fams[k] == fam && o->line_idx[k] == 0 && isfinite(o->line_values[k])) {
            o->line_values[k] = v;
            return;
        }
}

/* At the end of a line: its step (family 0) applies to all its pairs, in whatever order logged; the
   k-th value of a list (`'loss': [0.7, 0.5]`) is the k-th of as many rows. */
static int line_flush(Out *o, int32_t ln) {
    if (!o->line_n) return 0;
    for (int k = 0; k < o->line_n; k++) {
        double v = o->line_values[k];
        if (o->line_fams[k] != 0 || !isfinite(v)) continue;
        if (isnan(o->raw_first)) o->raw_first = v;
        else if (v < o->raw_last)        /* a counter that restarts each epoch: by its total, where it printed one */
            o->offset += isfinite(o->raw_total) && o->raw_total >= o->raw_last ? o->raw_total : o->raw_last;
        else if (v == o->raw_last && v == o->raw_total && v == o->line_total)
            o->offset += v;              /* printed once an epoch, at its end (`Step [100/100]`): a new epoch */
        o->raw_last = v;
        o->raw_total = o->line_total;
        o->step = o->offset + v;
    }
    int32_t span = 1;
    for (int k = 0; k < o->line_n; k++) {
        int32_t f = o->line_fams[k];
        if (f == 0) continue;
        int32_t row = o->rows + o->line_idx[k];
        if (o->line_idx[k] >= span) span = o->line_idx[k] + 1;
        if (f >= o->n_cols) {
            int m = f + 16;
            Column *c = realloc(o->cols, m * sizeof *c);
            if (!c) return -1;
            memset(c + o->n_cols, 0, (m - o->n_cols) * sizeof *c);
            o->cols = c; o->n_cols = m;
        }
        Column *c = &o->cols[f];
        if (buf_put(&c->rows, &row, sizeof row) || buf_put(&c->lines, &ln, sizeof ln) ||
            buf_put(&c->steps, &o->step, sizeof o->step) || buf_put(&c->values, &o->line_values[k], sizeof(double)))
            return -1;
    }
    o->rows += span;
    o->line_n = 0;
    o->line_total = NAN;
    return 0;
}

/* The failure literals, bucketed by their first two bytes. */
typedef struct {
    uint8_t lead[256];            /* 1: some literal starts with this byte */
    uint8_t bucket[65536];        /* 0: no literal starts with this pair; else bucket index + 1 */
    int first[256], next[256];    /* per bucket: a chain of literal indices */
    const char *lit[255]; Py_ssize_t len[255];
    int n;
} Literals;

static int has_literal(const Literals *L, const char *s, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i + 1 < n; i++) {
        if (!L->lead[(unsigned char)s[i]]) continue;
        uint8_t b = L->bucket[((unsigned char)s[i] << 8) | (unsigned char)s[i + 1]];
        if (!b) continue;
        for (int k = L->first[b - 1]; k >= 0; k = L->next[k])
            if (L->len[k] <= n - i && memcmp(s + i, L->lit[k], L->len[k]) == 0) return 1;
    }
    return 0;
}

#define FULLWIDTH_COLON "\xef\xbc\x9a"   /* `：` in UTF-8, as logs written in Chinese or Japanese have it */
#define BOX_BAR "\xe2\x94\x82"           /* `│` and `┃`: a table's column rule drawn in box characters */
#define BOX_BAR_HEAVY "\xe2\x94\x83"

enum { SECTION_VAL = -2, SECTION_TEST = -3, SECTION_TRAIN = -4, TABLE_COLUMN = 1, NONFINITE = 2 };

/* The section a lone word opens, or 0; only words with the initial of a section word are looked up. */
static int section_of(Ctx *c, const char *k, Py_ssize_t n) {
    if (!c->initial[(unsigned char)k[0]]) return 0;
    int fam = family(c, k, n);
    return fam <= SECTION_VAL ? fam : 0;
}

/* The family of a key inside a section (`val|loss`, `test|acc`; none outside one), or of a table
   column's header (`col|total`: some names are metrics only as a column). */
static int family_in(Ctx *c, int section, const char *k, Py_ssize_t n) {
    const char *prefix = section == SECTION_VAL ? "val|" : section == SECTION_TEST ? "test|" :
                         section == TABLE_COLUMN ? "col|" : section == NONFINITE ? "nonfinite|" : NULL;
    if (!prefix) return family(c, k, n);
    c->key.len = 0;
    if (buf_put(&c->key, prefix, strlen(prefix)) || buf_put(&c->key, k, n)) { c->failed = 1; return -1; }
    return family(c, c->key.data, (Py_ssize_t)c->key.len);
}

/* Darknet's `519.720886 avg loss, 0.001000 rate`: a number over the whole word at ws..we, one space,
   a name of one or two words, then a comma or the line's end. Where the name ends, 0 where this is
   not the form (or names no metric, or the step), -1 out of memory. */
static Py_ssize_t value_first(Ctx *c, Out *o, const char *s, Py_ssize_t n, Py_ssize_t ws, Py_ssize_t we, int ln) {
    double v;
    Py_ssize_t end;
    if (!parse_number(s, ws, n, &v, &end) || end < we) return 0;
    if (end + 1 >= n || s[end] != ' ' || !is_start((unsigned char)s[end + 1])) return 0;
    Py_ssize_t ks = end + 1, ke = ks;
    while (ke < n && is_keych((unsigned char)s[ke])) ke++;
    if (ke + 1 < n && s[ke] == ' ' && is_start((unsigned char)s[ke + 1])) {     /* `avg loss` */
        Py_ssize_t k = ke + 1;
        while (k < n && is_keych((unsigned char)s[k])) k++;
        if (k == n || s[k] == ',') ke = k;
    }
    if (ke < n && s[ke] != ',') return 0;
    int fam = family(c, s + ks, ke - ks);
    if (fam < 1 || c->last_line[fam] == ln) return 0;
    c->last_line[fam] = ln;
    return line_add(o, fam, v, 0) ? -1 : ke;
}

/* `Epoch[3]`, `Step[300/1000]`, `Epoch(3)`: a counter right after its name's bracket at s[j], closed by the
   bracket (after an optional `/total`), with no separator after it (`loss[0]: 0.5` is an index). */
static int attached_counter(const char *s, Py_ssize_t j, Py_ssize_t n) {
    char close = s[j] == '[' ? ']' : ')';
    double v;
    Py_ssize_t end;
    if (!parse_number(s, j + 1, n, &v, &end)) return 0;
    if (end < n && s[end] == '/' && !parse_number(s, end + 1, n, &v, &end)) return 0;
    if (end >= n || s[end] != close) return 0;
    end++;
    while (end < n && is_blank((unsigned char)s[end])) end++;
    return !(end < n && (s[end] == ':' || s[end] == '='));
}

/* The batch counter right after an epoch's number: `Train Epoch: 1 [12800/60000 (21%)]`, mmcv's `Epoch [3][200/500]`,
   the ImageNet example's `Epoch: [0][  10/5005]`, `Epoch:[0/20](22300/41914)`. From `end`, past the epoch's value:
   an optional `/total` and closing bracket, blanks, then a bracketed `done/total` (an optional `(21%)` after it).
   Where it is, its position and total, and *after the bracket that closes it, else 0. */
static int batch_counter(const char *s, Py_ssize_t n, Py_ssize_t k, double *pos, double *total, Py_ssize_t *after) {
    double v;
    Py_ssize_t end;
    if (k < n && s[k] == '/' && parse_number(s, k + 1, n, &v, &end)) k = end;
    if (k < n && (s[k] == ']' || s[k] == ')')) k++;
    while (k < n && is_blank((unsigned char)s[k])) k++;
    if (k >= n || (s[k] != '[' && s[k] != '(')) return 0;
    char close = s[k] == '[' ? ']' : ')';
    k++;
    while (k < n && is_blank((unsigned char)s[k])) k++;
    if (k >= n || !is_digit((unsigned char)s[k]) || !parse_number(s, k, n, pos, &end)) return 0;
    if (end >= n || s[end] != '/' || end + 1 >= n || !is_digit((unsigned char)s[end + 1]) ||
        !parse_number(s, end + 1, n, total, &end) || *total < *pos || *total <= 0) return 0;
    k = end;
    while (k < n && is_blank((unsigned char)s[k])) k++;
    if (k < n && s[k] == '(' && parse_number(s, k + 1, n, &v, &end) && end + 1 < n && s[end] == '%' && s[end + 1] == ')') {
        k = end + 2;
        while (k < n && is_blank((unsigned char)s[k])) k++;
    }
    if (k >= n || s[k] != close) return 0;
    *after = k + 1;
    return 1;
}

/* The step of an epoch's batch counter: its position after the totals of the epochs before it, so that an epoch
   logged once (`Train Epoch: 2 [0/500 (0%)]`) is a step of its own. The first epoch seen (or one the counter goes
   back to: a run appended, a resume) starts at epoch 1's end where it is 2 or more, as epochs count from 0 or 1:
   a log resumed at `Epoch: [30][0/500]` is no run at its first update. */
static double batch_step(Out *o, double epoch, double pos, double total) {
    if (isnan(o->batch_epoch) || epoch < o->batch_epoch) o->batch_base = epoch >= 2 ? (epoch - 1) * total : 0;
    else if (epoch > o->batch_epoch) o->batch_base += o->batch_total;
    o->batch_epoch = epoch;
    o->batch_total = total;
    return o->batch_base + pos;
}

/* A comma right after a key, then a number: keras-frcnn's `loss_rpn_cls,0.77,loss_rpn_regr,0.11`, a `key, value`
   pair, a zipped `('loss', 0.35)`. */
static __attribute__((noinline)) int comma_value(const char *s, Py_ssize_t j, Py_ssize_t n) {
    double v;
    Py_ssize_t end;
    j++;
    while (j < n && is_blank((unsigned char)s[j])) j++;
    return parse_number(s, j, n, &v, &end);
}

/* A count printed with thousands separators (`15,234`, `124,439,808`: tqdm, the HF Trainer's banner, Keras'
   summary): the number at s[j:*end] grown by each `,ddd` group after it. A decimal comma (`0,912`), a list
   (`1,2`) or a group with a fraction after it (`1,234.5`) is left as read. */
static __attribute__((noinline)) void thousands(const char *s, Py_ssize_t n, Py_ssize_t j, Py_ssize_t *end, double *v) {
    Py_ssize_t e = *end;
    if (e - j < 1 || e - j > 3 || s[j] == '0') return;
    for (Py_ssize_t k = j; k < e; k++)
        if (s[k] < '0' || s[k] > '9') return;
    double x = *v;
    int groups = 0;
    while (e + 3 < n && s[e] == ',' && is_digit((unsigned char)s[e + 1]) && is_digit((unsigned char)s[e + 2]) &&
           is_digit((unsigned char)s[e + 3]) &&
           (e + 4 == n || !is_digit((unsigned char)s[e + 4]))) {
        x = x * 1000 + (s[e + 1] - '0') * 100 + (s[e + 2] - '0') * 10 + (s[e + 3] - '0');
        e += 4;
        groups++;
    }
    if (groups && !(e < n && s[e] == '.')) {
        *v = x;
        *end = e;
    }
}

/* A section word's own number is its accuracy where it is a percentage on a line that counts epochs or
   steps (rasbt's `Epoch: 001/010 | Train: 10.000% | Validation: 9.8%`): a data split is announced
   once, without a counter (`Train: 80% Test: 20%`), and tqdm's `Train:  45%|####` is its progress. */
static int split_accuracy(Ctx *c, const char *s, Py_ssize_t n, Py_ssize_t end, int ln) {
    if (end >= n || s[end] != '%' || (end + 1 < n && s[end + 1] == '|')) return 0;
    if (c->n_fams > 0 && c->last_line[0] == ln) return 1;   /* the step (family 0) read on this line */
    int epoch = family(c, "epoch", 5);
    return epoch > 0 && c->last_line[epoch] == ln;
}

#define MAX_WORDS 4   /* the words of a label read before a value; a longer one is prose, its last words tried */

/* The start of the last k (at most MAX_WORDS) of the run's words. */
static inline Py_ssize_t run_start(const Py_ssize_t *starts, int words, int k) {
    return starts[(words - (words < k ? words : k)) % MAX_WORDS];
}

/* s[a..b) is a whole number written in digits alone. */
static int count_of(const char *s, Py_ssize_t a, Py_ssize_t b) {
    if (a >= b) return 0;
    for (Py_ssize_t k = a; k < b; k++)
        if (!is_digit((unsigned char)s[k])) return 0;
    return 1;
}

/* A count out of a total at s[j..end) `/` ...: their ratio in v, end moved past the total; else nothing changes. */
static __attribute__((noinline)) void count_ratio(const char *s, Py_ssize_t n, Py_ssize_t j, Py_ssize_t *end, double *v) {
    double total;
    Py_ssize_t tend;
    if (count_of(s, j, *end) && parse_number(s, *end + 1, n, &total, &tend) && count_of(s, *end + 1, tend) &&
        total >= *v && total > 0) {
        *v /= total;
        *end = tend;
    }
}

/* After `from 0.5`: ` to 0.4`, the value that replaced it (Keras' `val_loss improved from 0.5 to 0.4`). */
static __attribute__((noinline)) int to_value(const char *s, Py_ssize_t n, Py_ssize_t *end, double *v) {
    Py_ssize_t k = *end;
    if (k + 4 >= n || memcmp(s + k, " to ", 4)) return 0;
    return parse_number(s, k + 4, n, v, end);
}

/* Where a name starts inside the dashes drawn around it (`-----loss-----:`, `--LOSS--`: three dashes
   before it, or two on both sides; a CLI's `--lr` is none), or ws where the run [ws, i) is no such name. */
static __attribute__((noinline, cold)) Py_ssize_t framed_name(const char *s, Py_ssize_t ws, Py_ssize_t i) {
    Py_ssize_t d = ws;
    while (d < i && s[d] == '-') d++;
    int framed = i - d >= 2 && s[i - 1] == '-' && s[i - 2] == '-';
    return d < i && is_start((unsigned char)s[d]) && (d - ws >= 3 || (d - ws == 2 && framed)) ? d : ws;
}

/* The pairs of one cleaned line (`ln`: its index within the chunk) into o's current line. */
static int scan_pairs(Ctx *c, Out *o, const char *s, Py_ssize_t n, int ln) {
    Py_ssize_t i = 0, prev = -1;   /* prev: start of the word before, when a single space joins them */
    Py_ssize_t starts[MAX_WORDS];  /* with prev: the starts of the last words of that run, a ring */
    int words = 0;                 /* the run's words so far */
    int soft = 0;                  /* the section a two-word name opened (`val Loss:`), for the bare names after it */
    int bad = 0, section = 0;
    int name_cell = 0;             /* the cell before was a name with no number of its own after `|` */
    while (i < n) {
        unsigned char ch = (unsigned char)s[i];
        if (!is_keych(ch)) { i++; prev = -1; continue; }
        Py_ssize_t ws = i;
        while (i < n && is_keych((unsigned char)s[i])) i++;
        if (ch == '-' && i - ws > 2) {
            Py_ssize_t d = framed_name(s, ws, i);
            if (d != ws) { ws = d; ch = (unsigned char)s[d]; prev = -1; }
        }
        /* a possessive names the set a metric is of: LightGBM's `valid_0's auc: 0.5`, `training's l2: 0.3` */
        if (is_start(ch) && i + 2 < n && s[i] == '\'' && s[i + 1] == 's' && is_blank((unsigned char)s[i + 2])) i += 2;
        if (!is_start(ch)) {
            prev = -1;
            Py_ssize_t k = value_first(c, o, s, n, ws, i, ln);
            if (k < 0) return -1;
            if (k) i = k;
            continue;
        }
        Py_ssize_t we = i, j = i;
        if (j + 1 < n && s[j] == '(' && is_start((unsigned char)s[j + 1])) {   /* `Epoch(val) [1]` */
            Py_ssize_t k = j + 1;
            while (k < n && is_keych((unsigned char)s[k])) k++;
            if (k < n && s[k] == ')') {
                int sec = section_of(c, s + j + 1, k - j - 1);
                if (sec) { section = sec; j = k + 1; }
            }
        }
        int quoted = j < n && (s[j] == '\'' || s[j] == '"');
        if (quoted) j++;
        Py_ssize_t b0 = j;
        while (j < n && is_blank((unsigned char)s[j])) j++;
        char sep = 0;
        if (j + 2 < n && (unsigned char)s[j] == 0xef && !memcmp(s + j, FULLWIDTH_COLON, 3)) {   /* `loss：0.5` */
            sep = ':';
            j += 3;
            while (j < n && is_blank((unsigned char)s[j])) j++;
        } else if (j + 2 < n && (unsigned char)s[j] == 0xe2 && (!memcmp(s + j, BOX_BAR, 3) || !memcmp(s + j, BOX_BAR_HEAVY, 3))) {
            sep = '|';                   /* a table drawn in box characters (rich's, Lightning's test results) */
            j += 3;
            while (j < n && is_blank((unsigned char)s[j])) j++;
        } else if (j < n && (s[j] == '=' || s[j] == ':' || s[j] == '|')) {
            sep = s[j++];
            while (j < n && is_blank((unsigned char)s[j])) j++;
        } else if (j == b0 && j < n && s[j] == ',' && comma_value(s, j, n)) {   /* `loss_rpn_cls,0.77`, `('loss', 0.35)` */
            sep = ',';
            j++;
            while (j < n && is_blank((unsigned char)s[j])) j++;
        } else if (j == b0 && !(!quoted && j < n && (s[j] == '[' || s[j] == '(') && attached_counter(s, j, n))) {
            /* neither a separator nor blanks: no value follows */
            if (j < n && (s[j] == ')' || s[j] == ']') && ws > 0 && (s[ws - 1] == '(' || s[ws - 1] == '[')) {
                int sec = section_of(c, s + ws, we - ws);       /* `[valid] loss=` */
                if (sec) section = sec;
            }
            if (j < n && s[j] == ',' && prev >= 0) {      /* PaddleOCR's evaluation `cur metric, acc: 0.13` */
                int sec = section_of(c, s + prev, we - prev);
                if (sec) section = sec;
            }
            prev = -1;
            name_cell = 0;
            continue;
        }
        int listed = j < n && (s[j] == '[' || (j == b0 && s[j] == '('));
        if (listed) {                    /* `Epoch [1][50/500]`, `Iter [50/40000]`, `'loss': [0.7, 0.5]`, `Epoch(3)` */
            j++;
            while (j < n && is_blank((unsigned char)s[j])) j++;
        }
        /* a quoted key's quoted number, as PaddleDetection prints it (`'loss': '0.52'`, `'loss': 'nan'`): the
           value, where the quote closes right after it (not `'16-mixed'`, `'2024-03-01'`, `'nan-safe'`) */
        char vq = !listed && quoted && sep == ':' && j + 1 < n && (s[j] == '\'' || s[j] == '"') ? s[j] : 0;
        if (vq) j++;
        double v;
        Py_ssize_t end;
        int found = parse_number(s, j, n, &v, &end);
        if (vq && found && !(end < n && s[end] == vq)) found = 0;
        if (!found && !vq && j < n && is_start((unsigned char)s[j])) {   /* a wrapper: `tensor(0.5`, `np.float64(0.5)` */
            Py_ssize_t k = j;
            while (k < n && (is_keych((unsigned char)s[k]) && s[k] != '/' && s[k] != '-')) k++;
            if (k < n && s[k] == '(') {
                j = k + 1;
                if (j < n && s[j] == '[') j++;
                found = parse_number(s, j, n, &v, &end);
            }
        }
        if (found && sep == '|' && name_cell) {
            /* a row of a table of names, not of `name | value` pairs: Lightning's model summary
               (`2 | loss_fn | CrossEntropyLoss | 0 | train`), whose number is a parameter count */
            name_cell = 0;
            i = end;
            prev = -1;
            continue;
        }
        name_cell = 0;
        if (found) {
            if (sep != ',') thousands(s, n, j, &end, &v);
            /* a label of up to MAX_WORDS words before `:`/`=` (keras-frcnn's `Loss RPN classifier: 0.3`) */
            Py_ssize_t ks = prev < 0 ? ws : sep == ':' || sep == '=' ? run_start(starts, words, MAX_WORDS - 1) : prev;
            Py_ssize_t ke = we;
            /* Keras' checkpoint `val_loss improved from 0.5 to 0.4`: the name, that verb, the value it replaced
               and its own (not `lr reduced from 0.1 to 1e-4`, nor `... reducing learning rate to 1e-4`: the LR from the next epoch on, printed
               before the epoch's own `lr: 1e-3`, would read as an LR raised 1000x) */
            int moved = !sep && prev >= 0 && words >= 2 && we - ws == 4 && !memcmp(s + ws, "from", 4) &&
                        ws - 1 - prev == 8 && !memcmp(s + prev, "improved", 8) && to_value(s, n, &end, &v);
            if (moved) {
                ks = run_start(starts, words, MAX_WORDS);
                ke = prev - 1;
            }
            int fam = family_in(c, section, s + ks, ke - ks);
            if (moved && fam == 0) fam = -1;     /* `resumed step from 10 to 20` sets no step */
            if (soft && !section && prev < 0) {  /* `val Loss: 0.69 Acc: 0.46`: the Acc is val's too */
                int f = family_in(c, soft, s + ks, ke - ks);
                if (f >= 0) fam = f;
            }
            if (prev >= 0 && ks == prev && fam >= 0 && !section) {
                int sec = section_of(c, s + prev, ws - 1 - prev);
                if (sec) soft = sec;
            }
            /* `Accuracy: 980/10000 (10%)`: a count out of a total is their ratio (a counter's `Epoch 3/100` is
               where it is of its end) */
            if (fam > 0 && !moved && end + 1 < n && s[end] == '/' && fam != family(c, "epoch", 5))
                count_ratio(s, n, j, &end, &v);
            /* a step out of its total (`Epoch [3/5], Step [200/600]`): what a restart of the counter adds */
            if (fam == 0 && !moved && end + 1 < n && s[end] == '/' && is_digit((unsigned char)s[end + 1])) {
                double t;
                Py_ssize_t te;
                if (parse_number(s, end + 1, n, &t, &te) && t >= v && t > 0) o->line_total = t;
            }
            /* `lb=nan` under a name no alias knows: kept from its first non-finite value on (a NaN is news
               whatever its name; a value finite again after it says the model's state was not NaN; SB3's
               `|    ep_rew_mean     | nan      |` table cell too; a line that is only `err     nan`) */
            if (fam == -1 && (sep == '=' || sep == ':' || sep == '|' || (!sep && prev < 0 && lone_pair(s, n, ws, end)))) {
                if (!isfinite(v)) fam = family_in(c, NONFINITE, s + ws, we - ws);
                else {
                    c->key.len = 0;
                    if (buf_put(&c->key, "nonfinite|", 10) || buf_put(&c->key, s + ws, we - ws)) return -1;
                    fam = family_seen(c, c->key.data, (Py_ssize_t)c->key.len);
                }
            }
            if (fam <= SECTION_VAL) {
                section = fam;
                if (split_accuracy(c, s, n, end, ln)) {   /* `Epoch: 001/010 | Train: 10.000% | Loss: 2.303` */
                    int acc = family_in(c, fam, "acc", 3);
                    if (acc > 0 && c->last_line[acc] != ln) {
                        c->last_line[acc] = ln;
                        if (line_add(o, acc, v, 0)) return -1;
                    }
                }
            } else if (fam > 0 && c->last_line[fam] == ln && !isfinite(v)) {
                line_nonfinite(o, fam, v);
            } else if (fam >= 0 && c->last_line[fam] != ln) {
                c->last_line[fam] = ln;
                if (line_add(o, fam, v, 0)) return -1;
                double pos, total;
                Py_ssize_t after;
                /* not a validation pass's own counter (`Epoch(val) [3][10/50]`, `Val Epoch: 3 [10/50]`) */
                if (fam == family(c, "epoch", 5) && section != SECTION_VAL && section != SECTION_TEST &&
                    soft != SECTION_VAL && soft != SECTION_TEST &&
                    c->last_line[0] != ln && batch_counter(s, n, end, &pos, &total, &after)) {
                    c->last_line[0] = ln;
                    if (line_add(o, 0, batch_step(o, v, pos, total), 0)) return -1;
                    end = after;
                }
                /* a quoted key's list, as Keras' `history.history` prints it: every value (an unquoted
                   `lr=[1e-05, 1e-05]` lists param groups, one step) */
                for (int32_t idx = 1; quoted && sep == ':' && listed; idx++) {
                    Py_ssize_t k = end;
                    while (k < n && is_blank((unsigned char)s[k])) k++;
                    if (k == n || s[k] != ',') break;
                    k++;
                    while (k < n && is_blank((unsigned char)s[k])) k++;
                    if (!parse_number(s, k, n, &v, &end)) break;
                    if (line_add(o, fam, v, idx)) return -1;
                }
            }
            /* a counter inside the label, the value after it: `Loss at step 100 : nan`, word2vec's
               `Average loss at step  2000 :  4.37`, `Loss for Iter 1: 0.52` (the words before the
               preposition name it) */
            if (!sep && prev >= 0 && words >= 2 && is_counter_preposition(s + prev, ws - 1 - prev) &&
                (fam == 0 || fam == family(c, "epoch", 5))) {
                Py_ssize_t k = end, ns = run_start(starts, words, MAX_WORDS), end2;
                double v2;
                while (k < n && is_blank((unsigned char)s[k])) k++;
                if (ns < prev && k < n && (s[k] == ':' || s[k] == '=')) {
                    k++;
                    while (k < n && is_blank((unsigned char)s[k])) k++;
                    if (parse_number(s, k, n, &v2, &end2)) {
                        int f2 = family_in(c, section, s + ns, prev - 1 - ns);
                        if (f2 > 0 && c->last_line[f2] != ln) {
                            c->last_line[f2] = ln;
                            if (line_add(o, f2, v2, 0)) return -1;
                        }
                        end = end2;
                    }
                }
            }
            i = end;
            prev = -1;
            continue;
        }
        name_cell = sep == '|';
        /* a set's name before its pairs: `train: loss 0.91 acc 0.61 | val: loss 0.95`, `Valid [loss=0.95]` */
        if ((sep == ':' || listed) && j < n && is_start((unsigned char)s[j])) {
            int sec = section_of(c, s + ws, we - ws);
            if (sec) section = sec;
        }
        if ((sep == '=' || sep == ':') && (j == n || s[j] == ',' || s[j] == ';' || s[j] == '}' || s[j] == '|') &&
            family(c, s + ws, we - ws) >= 0)
            bad = 1;
        /* a word, one space, then a word: perhaps a two-word name */
        int two_word = we + 1 < n && s[we] == ' ' && is_start((unsigned char)s[we + 1]);
        if (!two_word && (sep == '|' || j == n)) {       /* `| valid | epoch 2` */
            int sec = section_of(c, s + ws, we - ws);
            if (sec) section = sec;
        }
        if (prev >= 0) {                                 /* `Test net output #0: accuracy = 0.9` */
            int sec = section_of(c, s + prev, ws - 1 - prev);
            if (sec) section = sec;
        }
        if (two_word) {
            if (prev < 0) words = 0;
            starts[words++ % MAX_WORDS] = ws;
        }
        prev = two_word ? ws : -1;
        if (two_word) i = we + 1;
    }
    o->malformed += bad;
    return 0;
}

/* Table cells: at `|` and tabs (after one leading `|`), at commas (a CSV), or at runs of blanks. */
#define MAX_COLUMNS 64
enum { BLANKS = 0, PIPES = 1, COMMAS = 2, WORDS = 3 };   /* WORDS: names one blank apart (`print('epoch', 'loss')`) */
typedef struct { const char *p; Py_ssize_t n; } Cell;

static Py_ssize_t trim(const char **p, Py_ssize_t n) {
    while (n && is_blank((unsigned char)**p)) { (*p)++; n--; }
    while (n && is_blank((unsigned char)(*p)[n - 1])) n--;
    return n;
}

static int split_cells(const char *s, Py_ssize_t n, int how, Cell *out, int max) {
    int k = 0;
    if (how != BLANKS) {
        n = trim(&s, n);
        if (how == PIPES && n && *s == '|') { s++; n--; }
        Py_ssize_t a = 0;
        for (Py_ssize_t i = 0; i <= n; i++) {
            if (i < n && (how == COMMAS ? s[i] != ',' : s[i] != '|' && s[i] != '\t')) continue;
            if (k == max) return max + 1;
            const char *p = s + a;
            out[k].n = trim(&p, i - a);
            out[k++].p = p;
            a = i + 1;
        }
        return k;
    }
    for (Py_ssize_t i = 0; i < n;) {
        while (i < n && is_blank((unsigned char)s[i])) i++;
        if (i == n) break;
        Py_ssize_t a = i;
        while (i < n && !is_blank((unsigned char)s[i])) i++;
        if (k == max) return max + 1;
        out[k++] = (Cell){s + a, i - a};
    }
    return k;
}

/* A cell that is a number with at most a unit (`7.17G`, `1/100`, `41%`, `640:`). */
static int numeric_cell(Cell c, double *v) {
    Py_ssize_t end;
    if (!c.n || !parse_number(c.p, 0, c.n, v, &end)) return 0;
    if (end < c.n && c.p[end] == '/' && end + 1 < c.n && is_digit((unsigned char)c.p[end + 1])) {
        end++;
        while (end < c.n && is_digit((unsigned char)c.p[end])) end++;
        return end == c.n;
    }
    for (int u = 0; u < 3 && end < c.n && (((cls[(unsigned char)c.p[end]] & START) && c.p[end] != '_') || c.p[end] == '%'); u++) end++;
    if (end < c.n && c.p[end] == ':') end++;
    return end == c.n;
}

typedef struct { int fams[MAX_COLUMNS]; int n; int how; Py_ssize_t lead; int stamped; } Header;
/* n = 0: no table in force; lead: the header's blanks before it; stamped: the header came after a logger's
   stamp (stamp_len), so its rows do too (a row's own first cell may be a clock: a `time` column) */

static int table_row(Ctx *c, Out *o, const Header *t, const char *s, Py_ssize_t n, int ln) {
    Cell all[MAX_COLUMNS + 2], *cells = all;
    int k = split_cells(s, n, t->how == WORDS ? BLANKS : t->how, all, MAX_COLUMNS + 1);
    /* pandas prints a frame's index under the blanks its header starts with: that cell is no column */
    if ((t->how == BLANKS || t->how == WORDS) && k == t->n + 1 && all[0].p + all[0].n - s <= t->lead) { cells++; k--; }
    if (t->how == WORDS && k != t->n) return 0;      /* names one blank apart: rows of exactly as many cells */
    if (k > t->n) k = t->n;
    double vals[MAX_COLUMNS];
    int ok[MAX_COLUMNS], count = 0;
    for (int i = 0; i < k; i++) count += ok[i] = numeric_cell(cells[i], &vals[i]);
    int need = (t->n + 1) / 2 > 2 ? (t->n + 1) / 2 : 2;
    if (!k || !ok[0] || count < need) return 0;
    for (int i = 0; i < k; i++) {
        int fam = t->fams[i];
        if (ok[i] && fam >= 0 && c->last_line[fam] != ln) {
            c->last_line[fam] = ln;
            if (line_add(o, fam, vals[i], 0)) return -1;
        }
    }
    return 0;
}

/* A header row: 3 to MAX_COLUMNS names apart by `|`, tabs, commas (a CSV's, as Keras' CSVLogger writes it;
   one word each) or two blanks, two of them metrics, or just two names that are both metrics (pandas'
   `pd.DataFrame(history.history)` of `loss` and `accuracy`); or names one blank apart, at least 3, half of
   them metrics (a print loop's `print('epoch', 'loss', 'acc')`; prose names fewer). */
static int table_header(Ctx *c, Header *t, const char *s, Py_ssize_t n) {
    int how = memchr(s, '|', n) || memchr(s, '\t', n) ? PIPES : memchr(s, ',', n) ? COMMAS : BLANKS;
    Cell cells[MAX_COLUMNS + 1];
    int k = 0;
    const char *p = s;
    trim(&p, n);
    Py_ssize_t lead = p - s;
    if (how != BLANKS) {
        k = split_cells(s, n, how, cells, MAX_COLUMNS + 1);
        if (k && !cells[k - 1].n) k--;
    } else {
        n = trim(&s, n);
        Py_ssize_t a = 0;
        for (Py_ssize_t i = 0; i <= n && k <= MAX_COLUMNS; i++) {
            if (i < n && !(s[i] == ' ' && i + 1 < n && s[i + 1] == ' ')) continue;
            cells[k++] = (Cell){s + a, i - a};
            while (i < n && s[i] == ' ') i++;
            a = i;
        }
        if (k == 1) {
            how = WORDS;
            k = split_cells(s, n, BLANKS, cells, MAX_COLUMNS + 1);
        }
    }
    if (k < 2 || k > MAX_COLUMNS || (k == 2 && how == WORDS)) return 0;
    int known = 0, fams[MAX_COLUMNS];
    for (int i = 0; i < k; i++) {
        Cell x = cells[i];
        if (!x.n && how == COMMAS && i == 0) { fams[i] = -1; continue; }     /* pandas' `to_csv`: the index */
        if (!x.n || !is_start((unsigned char)x.p[0])) return 0;
        for (Py_ssize_t q = 0; q < x.n; q++)
            if (!(is_keych((unsigned char)x.p[q]) || (x.p[q] == ' ' && how != COMMAS && !(q + 1 < x.n && x.p[q + 1] == ' '))))
                return 0;
        int fam = family_in(c, TABLE_COLUMN, x.p, x.n);
        fams[i] = fam >= 0 ? fam : -1;
        known += fam >= 0;
    }
    if (known < 2 || (how == WORDS && known < (k + 1) / 2)) return 0;
    memcpy(t->fams, fams, sizeof fams);
    t->n = k;
    t->how = how;
    t->lead = lead;
    return 1;
}

/* The index just past exactly k digits from i, else -1. */
static Py_ssize_t digits_at(const char *s, Py_ssize_t i, Py_ssize_t n, int k) {
    for (int j = 0; j < k; j++, i++) if (i >= n || !is_digit((unsigned char)s[i])) return -1;
    return i;
}

/* hh:mm:ss with up to 9 digits of a fraction after `.` or `,`: the index past it, else -1. */
static Py_ssize_t clock_at(const char *s, Py_ssize_t i, Py_ssize_t n) {
    for (int part = 0; part < 3; part++) {
        if (part && (i >= n || s[i++] != ':')) return -1;
        if ((i = digits_at(s, i, n, 2)) < 0) return -1;
    }
    if (i + 1 < n && (s[i] == '.' || s[i] == ',') && is_digit((unsigned char)s[i + 1])) {
        i++;
        for (int j = 0; j < 9 && i < n && is_digit((unsigned char)s[i]); j++) i++;
    }
    return i;
}

static const char *const LEVELS[] = {"INFO", "WARNING", "WARN", "ERROR", "DEBUG", "CRITICAL", "FATAL"};

/* The blanks, a `-` or `|` between blanks, after a stamp or a level: the index past them. */
static Py_ssize_t stamp_gap(const char *s, Py_ssize_t i, Py_ssize_t n) {
    while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
    if (i < n && (s[i] == '|' || (s[i] == '-' && !(i + 1 < n && (is_digit((unsigned char)s[i + 1]) || s[i + 1] == '.'))))) {
        i++;
        while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
    }
    return i;
}

/* A logger's stamp in front of a table's line (`2024-03-01 10:22:30,809 - INFO - `, `[10:22:03] `, glog's
   `I0301 10:22:32.389 1234 train.py:88] `): its length, the table's cells start after it; 0 without one.
   The clock-bearing forms of dressing.py's prefixes (a table's header and rows are matched from their
   first cell, so the stamp must go; pairs are found anywhere in a line and need no such care). */
static Py_ssize_t stamp_len(const char *s, Py_ssize_t n) {
    Py_ssize_t i, j;
    if (n > 5 && (s[0] == 'I' || s[0] == 'W' || s[0] == 'E' || s[0] == 'F') && (j = digits_at(s, 1, n, 4)) > 0
            && j < n && s[j] == ' ' && (j = clock_at(s, j + 1, n)) > 0) {           /* glog */
        while (j < n && s[j] == ' ') j++;
        Py_ssize_t d = j;
        while (j < n && is_digit((unsigned char)s[j])) j++;
        if (j == d || j >= n || s[j] != ' ') return 0;
        const char *close = memchr(s + j, ']', n - j);
        return close ? stamp_gap(s, close - s + 1, n) : 0;
    }
    int bracket = n && s[0] == '[';
    i = bracket;
    if ((j = digits_at(s, i, n, 4)) > 0 && j < n && s[j] == '-') {                   /* 2024-03-01 10:22:30 */
        if ((j = digits_at(s, j + 1, n, 2)) < 0 || j >= n || s[j] != '-') return 0;
        if ((j = digits_at(s, j + 1, n, 2)) < 0 || j >= n || (s[j] != ' ' && s[j] != 'T')) return 0;
        if ((j = clock_at(s, j + 1, n)) < 0) return 0;
        if (j < n && s[j] == 'Z') j++;
    } else if ((j = clock_at(s, i, n)) < 0) return 0;
    if (bracket && (j >= n || s[j++] != ']')) return 0;
    i = stamp_gap(s, j, n);
    Py_ssize_t l = i + (i < n && s[i] == '[');
    for (size_t k = 0; k < sizeof LEVELS / sizeof *LEVELS; k++) {
        Py_ssize_t w = (Py_ssize_t)strlen(LEVELS[k]);
        if (l + w <= n && !memcmp(s + l, LEVELS[k], w) && !(l + w < n && is_keych((unsigned char)s[l + w]))) {
            l += w;
            if (l < n && s[l] == ']') l++;
            if (l < n && s[l] == ':') l++;
            return stamp_gap(s, l, n);
        }
    }
    return i;
}

/* One cleaned line: its pairs, else a row of the table in force, else perhaps a new header. */
static int scan_line(Ctx *c, Out *o, Header *t, const char *s, Py_ssize_t n, int ln) {
    if (scan_pairs(c, o, s, n, ln)) return -1;
    if (o->line_n) t->n = 0;
    else {
        Py_ssize_t k = stamp_len(s, n);
        if (t->n && table_row(c, o, t, s + k * t->stamped, n - k * t->stamped, ln)) return -1;
        const char *p = s + k;
        if (!o->line_n && !c->failed && trim(&p, n - k) && table_header(c, t, s + k, n - k)) t->stamped = k > 0;
    }
    return line_flush(o, ln);
}

static void free_all(Ctx *c, Out *o, char *scratch) {
    for (size_t i = 0; i < c->table.cap; i++) free(c->table.slots[i].key);
    free(c->table.slots);
    free(c->last_line);
    free(c->key.data);
    for (int f = 0; f < o->n_cols; f++) {
        Column *col = &o->cols[f];
        free(col->rows.data); free(col->lines.data); free(col->steps.data); free(col->values.data);
    }
    free(o->cols); free(o->line_fams); free(o->line_values); free(o->line_idx); free(o->hits.data);
    free(scratch);
}

static PyObject *scan(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer view;
    PyObject *resolve, *literals;
    const char *initials = "";
    Py_ssize_t n_initials = 0;
    if (!PyArg_ParseTuple(args, "y*OO!|y#", &view, &resolve, &PyTuple_Type, &literals, &initials, &n_initials))
        return NULL;
    Literals *lits = malloc(sizeof *lits);
    if (!lits) { PyBuffer_Release(&view); return PyErr_NoMemory(); }
    memset(lits->lead, 0, sizeof lits->lead);
    memset(lits->bucket, 0, sizeof lits->bucket);
    lits->n = 0;
    int n_buckets = 0;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(literals) && lits->n < 255; k++) {
        PyObject *item = PyTuple_GET_ITEM(literals, k);
        if (!PyBytes_Check(item) || PyBytes_GET_SIZE(item) < 2) continue;
        const char *p = PyBytes_AS_STRING(item);
        int pair = ((unsigned char)p[0] << 8) | (unsigned char)p[1];
        lits->lead[(unsigned char)p[0]] = 1;
        if (!lits->bucket[pair]) { lits->bucket[pair] = ++n_buckets; lits->first[n_buckets - 1] = -1; }
        int b = lits->bucket[pair] - 1;
        lits->lit[lits->n] = p; lits->len[lits->n] = PyBytes_GET_SIZE(item);
        lits->next[lits->n] = lits->first[b];
        lits->first[b] = lits->n++;
    }

    Ctx c = {0};
    c.resolve = resolve;
    for (Py_ssize_t k = 0; k < n_initials; k++) c.initial[(unsigned char)initials[k]] = 1;
    Out o = {0};
    o.step = o.raw_first = o.raw_last = o.batch_epoch = o.raw_total = o.line_total = NAN;
    Header table = {.n = 0};
    const char *data = view.buf;
    Py_ssize_t size = view.len, pos = 0;
    char *scratch = NULL;
    Py_ssize_t scratch_cap = 0;
    int ln = 0, has_cr = 0, oom = 0;
    c.ts = PyEval_SaveThread();
    for (;;) {
        const char *nl = memchr(data + pos, '\n', size - pos);
        Py_ssize_t end = nl ? nl - data : size;
        const char *s = data + pos;
        Py_ssize_t n = end - pos;
        if (memchr(s, '\r', n)) {                 /* the last state of a rewritten line */
            has_cr = 1;
            while (n && s[n - 1] == '\r') n--;
            const char *cr = memrchr(s, '\r', n);
            if (cr) { n -= cr + 1 - s; s = cr + 1; }
        }
        if (n >= 4 && memchr(s, '#', n)) {        /* CloudWatch writes a `\r` as `#015` (SageMaker logs) */
            while (n >= 4 && !memcmp(s + n - 4, "#015", 4)) n -= 4;
            for (Py_ssize_t k = n - 4; k >= 0; k--)
                if (s[k] == '#' && !memcmp(s + k, "#015", 4)) { s += k + 4; n -= k + 4; break; }
        }
        if (memchr(s, 0x1b, n)) {                 /* ANSI colour: copy the line without it */
            if (n > scratch_cap) {
                char *p = realloc(scratch, n);
                if (!p) { oom = 1; break; }
                scratch = p; scratch_cap = n;
            }
            Py_ssize_t m = 0;
            for (Py_ssize_t i = 0; i < n; i++) {
                if (s[i] == 0x1b && i + 1 < n && s[i + 1] == '[') {
                    Py_ssize_t k = i + 2;
                    while (k < n && (is_digit((unsigned char)s[k]) || s[k] == ';' || s[k] == '?')) k++;
                    if (k < n && ((s[k] >= 'A' && s[k] <= 'Z') || (s[k] >= 'a' && s[k] <= 'z'))) { i = k; continue; }
                }
                scratch[m++] = s[i];
            }
            s = scratch; n = m;
        }
        /* a Markdown quote's marker (a paste quoted in a GitHub comment): a table's header and rows are matched
           from their first cell */
        for (int q = 0; q < 2 && n >= 2 && s[0] == '>' && (s[1] == ' ' || s[1] == '\t'); q++) { s += 2; n -= 2; }
        if (scan_line(&c, &o, &table, s, n, ln) < 0) { oom = 1; break; }
        if (c.failed) break;
        if (has_literal(lits, s, n)) {
            int64_t hit[2] = {ln, pos};
            if (buf_put(&o.hits, hit, sizeof hit)) { oom = 1; break; }
        }
        if (!nl) break;
        pos = end + 1;
        ln++;
    }
    PyEval_RestoreThread(c.ts);
    free(lits);
    PyBuffer_Release(&view);
    if (oom || c.failed) {
        free_all(&c, &o, scratch);
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return NULL;
    }
#define BYTES(b) ((b).data ? (b).data : ""), (Py_ssize_t)(b).len
    PyObject *columns = PyList_New(0);
    for (int f = 0; columns && f < o.n_cols; f++) {
        Column *col = &o.cols[f];
        if (!col->rows.len) continue;
        PyObject *t = Py_BuildValue("(iy#y#y#y#)", f, BYTES(col->rows), BYTES(col->lines), BYTES(col->steps),
                                    BYTES(col->values));
        if (!t || PyList_Append(columns, t) < 0) Py_CLEAR(columns);
        Py_XDECREF(t);
    }
    PyObject *res = columns ? Py_BuildValue("(iiNy#ldddi)", ln + 1, o.rows, columns, BYTES(o.hits), o.malformed,
                                            o.step, o.raw_first, o.raw_last, has_cr) : NULL;
#undef BYTES
    free_all(&c, &o, scratch);
    return res;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS,
     "scan(chunk, resolve, literals, section_initials=b'') -> (lines, metric lines, [(family, rows int32, lines int32, steps float64, "
     "values float64)], hits int64 pairs (line, byte offset), malformed lines, last step, first and last step as "
     "logged, had carriage returns); a step counter that goes back (one per epoch) continues from where it was"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "_logscan", .m_size = -1, .m_methods = methods};

PyMODINIT_FUNC PyInit__logscan(void) {
    init_classes();
    return PyModule_Create(&module);
}
