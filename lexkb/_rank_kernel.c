/* A keyword ranking that scores every row, in one pass of compiled code (lexkb.keyword_ranking).

   numpy needs a dozen calls for it (gather the query words' postings, a bincount, the heading
   field's bincount, casts, a selection of the best rows, their coverage), each a few microseconds
   of fixed cost over arrays of every row: on a corpus of ObliQA's size that is most of a keyword
   search. Here one loop adds the postings, one loop scores and selects, and only the selected
   rows' coverage is looked up: under half the time on ObliQA's 16,779 rows (BENCHMARKS.md).

   The floats are numpy's, bit for bit: postings are added to float64 in the same order (the
   query's terms as `QueryTerms.summed` orders them, each term's rows in turn), the heading
   field likewise, then each is cast to float32 and combined with float32 arithmetic as
   `HeadingScores.added_to` does. Selection keeps `fusion.best`'s rule: the k highest positive
   scores, a tie at the k-th score going to the lower row. tests/query/test_keyword_ranking.py
   holds the two paths to the same rows and floats.

   The caller lends two float64 arrays of one slot per row, zeroed, that the postings are added
   into; they come back zeroed, each slot cleared as the one pass over the rows reads it. Every
   index read is checked against its array's length, so a damaged snapshot raises ValueError
   instead of writing outside the scratch. The loops run without the GIL. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    float score; /* ranked: the words and the heading field */
    float body;  /* the words alone */
    int64_t row;
} Entry;

/* Whether a ranks below b: a lower score, or the same score at a later row. */
static int worse(const Entry *a, const Entry *b) {
    return a->score < b->score || (a->score == b->score && a->row > b->row);
}

static void sift_down(Entry *heap, Py_ssize_t size, Py_ssize_t at) {
    for (;;) {
        Py_ssize_t low = at, left = 2 * at + 1, right = left + 1;
        if (left < size && worse(&heap[left], &heap[low])) low = left;
        if (right < size && worse(&heap[right], &heap[low])) low = right;
        if (low == at) return;
        Entry swap = heap[at];
        heap[at] = heap[low];
        heap[low] = swap;
        at = low;
    }
}

static void sift_up(Entry *heap, Py_ssize_t at) {
    while (at > 0) {
        Py_ssize_t parent = (at - 1) / 2;
        if (!worse(&heap[at], &heap[parent])) return;
        Entry swap = heap[at];
        heap[at] = heap[parent];
        heap[parent] = swap;
        at = parent;
    }
}

static int by_row(const void *a, const void *b) {
    int64_t x = ((const Entry *)a)->row, y = ((const Entry *)b)->row;
    return (x > y) - (x < y);
}

/* Sums each term's postings into `into` (float64, one slot per row). Returns 0, or -1 when a
   posting names a row or a term outside the arrays. */
static int postings_pass(const int64_t *indptr, Py_ssize_t n_indptr, const int32_t *rows,
                         Py_ssize_t n_postings, const float *weights, const int64_t *terms,
                         Py_ssize_t n_terms, double *into, Py_ssize_t n_rows) {
    for (Py_ssize_t i = 0; i < n_terms; i++) {
        int64_t term = terms[i];
        if (term < 0 || term + 1 >= n_indptr) return -1;
        int64_t start = indptr[term], end = indptr[term + 1];
        if (start < 0 || end > n_postings || start > end) return -1;
        for (int64_t j = start; j < end; j++) {
            int32_t row = rows[j];
            if (row < 0 || row >= n_rows) return -1;
            into[row] += (double)weights[j];
        }
    }
    return 0;
}

static int field_pass(const int32_t *rows, const double *weights, Py_ssize_t n, double *into,
                      Py_ssize_t n_rows) {
    for (Py_ssize_t j = 0; j < n; j++) {
        int32_t row = rows[j];
        if (row < 0 || row >= n_rows) return -1;
        into[row] += weights[j];
    }
    return 0;
}

/* Whether the sorted rows[start:end] (one term's postings) hold `row`. */
static int holds(const int32_t *rows, int64_t start, int64_t end, int64_t row) {
    int64_t limit = end;
    while (start < end) {
        int64_t middle = start + (end - start) / 2;
        if (rows[middle] < row)
            start = middle + 1;
        else
            end = middle;
    }
    return start < limit && rows[start] == row;
}

static int check(Py_buffer *buffer, Py_ssize_t itemsize, const char *name, int writable) {
    if (buffer->itemsize != itemsize || buffer->len % itemsize != 0) {
        PyErr_Format(PyExc_ValueError, "%s: items of %zd bytes expected", name, itemsize);
        return -1;
    }
    if (writable && buffer->readonly) {
        PyErr_Format(PyExc_ValueError, "%s must be writable", name);
        return -1;
    }
    return 0;
}

#define COUNT(buffer) ((buffer).len / (buffer).itemsize)

static PyObject *rank_every_row(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer indptr, rows, weights, idf, terms, field_rows, field_weights, body, field;
    Py_buffer out_rows, out_ranked, out_body, out_covered, keep = {0};
    PyObject *keep_object;
    float heading_weight;
    int has_field;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*pfOw*w*w*w*w*w*", &indptr, &rows, &weights,
                          &idf, &terms, &field_rows, &field_weights, &has_field,
                          &heading_weight, &keep_object, &body, &field, &out_rows,
                          &out_ranked, &out_body, &out_covered))
        return NULL;
    PyObject *result = NULL;
    int has_keep = keep_object != Py_None;
    if (has_keep && PyObject_GetBuffer(keep_object, &keep, PyBUF_SIMPLE) < 0) goto done;
    if (check(&indptr, 8, "indptr", 0) || check(&rows, 4, "rows", 0) ||
        check(&weights, 4, "weights", 0) || check(&idf, 8, "idf", 0) ||
        check(&terms, 8, "terms", 0) || check(&field_rows, 4, "field rows", 0) ||
        check(&field_weights, 8, "field weights", 0) || check(&body, 8, "body scratch", 1) ||
        check(&field, 8, "field scratch", 1) ||
        check(&out_rows, 8, "out rows", 1) || check(&out_ranked, 4, "out ranked", 1) ||
        check(&out_body, 4, "out body", 1) || check(&out_covered, 8, "out covered", 1))
        goto done;
    Py_ssize_t n_rows = COUNT(body), k = COUNT(out_rows);
    if (COUNT(field) != n_rows || (has_keep && keep.len != n_rows) ||
        COUNT(rows) != COUNT(weights) || COUNT(field_rows) != COUNT(field_weights) ||
        COUNT(indptr) != COUNT(idf) + 1 || COUNT(out_ranked) != k || COUNT(out_body) != k ||
        COUNT(out_covered) != k || k < 1) {
        PyErr_SetString(PyExc_ValueError, "arrays of mismatched lengths");
        goto done;
    }
    const int64_t *ip = indptr.buf, *tm = terms.buf;
    const int32_t *pr = rows.buf, *fr = field_rows.buf;
    const float *pw = weights.buf;
    const double *fw = field_weights.buf, *term_idf = idf.buf;
    const uint8_t *kept = has_keep ? keep.buf : NULL;
    double *b = body.buf, *f = field.buf;
    Py_ssize_t n_terms = COUNT(terms), n_indptr = COUNT(indptr), n_postings = COUNT(rows);
    Py_ssize_t n_field = has_field ? COUNT(field_rows) : 0, found = 0;
    int bad = 0;
    Entry *heap = malloc((size_t)k * sizeof(Entry));
    if (heap == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS;
    bad = postings_pass(ip, n_indptr, pr, n_postings, pw, tm, n_terms, b, n_rows) ||
          field_pass(fr, fw, n_field, f, n_rows);
    if (!bad) {
        /* One pass reads each row's sums, clears its slots, and keeps the row if it beats the
           worst of the best so far: once k rows are held, few rows do, so the one comparison
           most rows get is a branch the processor predicts. A row's score is never below the
           smallest float above 0 unless it is 0, and 0 is never among the best. */
        float bar = nextafterf(0.0f, 1.0f);
        for (Py_ssize_t r = 0; r < n_rows; r++) {
            float words = (float)b[r], score = words;
            b[r] = 0.0;
            if (has_field) {
                score = (float)f[r] * heading_weight + words;
                f[r] = 0.0;
            }
            if (!(score >= bar) || (kept != NULL && !kept[r])) continue;
            Entry entry = {score, words, (int64_t)r};
            if (found < k) {
                heap[found] = entry;
                sift_up(heap, found++);
            } else if (worse(&heap[0], &entry)) {
                heap[0] = entry;
                sift_down(heap, k, 0);
            } else {
                continue;
            }
            if (found == k) bar = heap[0].score;
        }
        qsort(heap, (size_t)found, sizeof(Entry), by_row);
        int64_t *o_rows = out_rows.buf;
        float *o_ranked = out_ranked.buf, *o_body = out_body.buf;
        double *o_covered = out_covered.buf;
        for (Py_ssize_t i = 0; i < found; i++) {
            int64_t row = heap[i].row;
            double covered = 0.0;
            for (Py_ssize_t t = 0; t < n_terms; t++) {
                int64_t term = tm[t];
                if (holds(pr, ip[term], ip[term + 1], row)) covered += term_idf[term];
            }
            o_rows[i] = row;
            o_ranked[i] = heap[i].score;
            o_body[i] = heap[i].body;
            o_covered[i] = covered;
        }
    }
    if (bad) { /* the scratch goes back zeroed, even after a bad posting */
        memset(b, 0, (size_t)n_rows * sizeof(double));
        memset(f, 0, (size_t)n_rows * sizeof(double));
    }
    Py_END_ALLOW_THREADS;
    free(heap);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "a posting names a row or term outside the index");
        goto done;
    }
    result = PyLong_FromSsize_t(found);
done:
    PyBuffer_Release(&indptr);
    PyBuffer_Release(&rows);
    PyBuffer_Release(&weights);
    PyBuffer_Release(&idf);
    PyBuffer_Release(&terms);
    PyBuffer_Release(&field_rows);
    PyBuffer_Release(&field_weights);
    PyBuffer_Release(&body);
    PyBuffer_Release(&field);
    PyBuffer_Release(&out_rows);
    PyBuffer_Release(&out_ranked);
    PyBuffer_Release(&out_body);
    PyBuffer_Release(&out_covered);
    if (has_keep && keep.obj != NULL) PyBuffer_Release(&keep);
    return result;
}

static PyMethodDef methods[] = {
    {"rank_every_row", rank_every_row, METH_VARARGS,
     "rank_every_row(indptr, rows, weights, idf, terms, field_rows, field_weights, has_field, "
     "heading_weight, keep, body, field, out_rows, out_ranked, out_body, out_covered)"
     " -> the number of rows written: the best len(out_rows) rows of a keyword ranking that "
     "scores every row, in row order, with their ranked and body scores and coverage."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_rank_kernel",
    "A keyword ranking scored over every row in compiled code (lexkb.keyword_ranking).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__rank_kernel(void) { return PyModule_Create(&module); }
