/* Byte-level BPE (clgrad_tokenizer.h): pre-splitting into words, learning merges, encoding.
 *
 * Learning works on the distinct words of the text, each with its count. Every adjacent pair of
 * tokens has a count (summed over the words it occurs in, times their counts) and a list of the
 * words it occurs in; a max-heap holds (count, pair) entries, a stale one (its count changed since
 * it was pushed) skipped when it surfaces. A merge rewrites only the words on its pair's list and
 * adjusts the counts of the pairs beside each occurrence, so its cost is that of the occurrences it
 * merges, not of the text (no rescan per merge).
 *
 * Encoding splits the same way and merges each word by rank, the lowest-ranked pair present
 * first (all its occurrences, left to right), which reproduces what learning did to that word; the
 * distinct words of one call are cached, so a repeated word costs one hash lookup. */
#include "tokenizer_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- pre-splitting ---------------------------------------------------------------------------- */
enum { C_LETTER, C_DIGIT, C_SPACE, C_OTHER };

static int cls(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80)
		return C_LETTER;
	if (c >= '0' && c <= '9')
		return C_DIGIT;
	if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f')
		return C_SPACE;
	return C_OTHER;
}

/* GPT-2's pattern  's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * on bytes, then cut at CLG_BPE_MAX_WORD */
static size_t word_end(const unsigned char *s, size_t n, size_t i)
{
	size_t j = i;
	int c;

	if (s[i] == '\'' && i + 1 < n) {
		unsigned char a = s[i + 1], b = i + 2 < n ? s[i + 2] : 0;
		if (a == 's' || a == 't' || a == 'm' || a == 'd')
			return i + 2;
		if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
			return i + 3;
	}
	if (s[i] == ' ' && i + 1 < n && cls(s[i + 1]) != C_SPACE)
		j = i + 1; /* the space joins the word that follows */
	c = cls(s[j]);
	if (c != C_SPACE) {
		while (j < n && cls(s[j]) == c)
			j++;
		return j;
	}
	while (j < n && cls(s[j]) == C_SPACE)
		j++;
	/* \s+(?!\S): a run followed by a word leaves its last character to it (or to itself) */
	return j < n && j - i > 1 ? j - 1 : j;
}

size_t tok_word_end(const unsigned char *s, size_t n, size_t i)
{
	size_t e = word_end(s, n, i);
	return e - i > CLG_BPE_MAX_WORD ? i + CLG_BPE_MAX_WORD : e;
}

static uint64_t hash_bytes(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

static uint64_t mix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	return k ^ (k >> 33);
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap ? *cap : 16;
	void *q;
	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (!(q = realloc(*p, c * elem)))
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

/* ---- learning --------------------------------------------------------------------------------- */
typedef struct {
	int64_t count;
	int32_t pair;
} heap_ent;

typedef struct {
	/* distinct words: symbols sym[w_off[w], w_off[w] + w_n[w]), w_count[w] occurrences */
	size_t nw, cap_w;
	size_t *w_off;
	int32_t *w_n;
	int64_t *w_count;
	int32_t *w_stamp;   /* the last merge that rewrote the word */
	int32_t *sym;
	/* pairs */
	size_t np, cap_p;
	int32_t *p_l, *p_r;
	int64_t *p_count;
	int32_t **p_occ;    /* words the pair occurs in (may repeat, may be stale) */
	int32_t *p_occ_n, *p_occ_cap;
	int32_t *p_dirty;   /* the merge that last changed the pair's count, -1 */
	uint64_t *pt_key;   /* (l << 32 | r) -> pair, open addressing */
	int32_t *pt_val;
	size_t pt_cap;
	/* heap */
	heap_ent *heap;
	size_t nh, cap_h;
	int32_t *dirty;     /* pairs changed by the merge under way */
	size_t nd, cap_d;
} bpe_learner;

static int heap_less(const bpe_learner *b, heap_ent x, heap_ent y) /* x below y: y pops first */
{
	if (x.count != y.count)
		return x.count < y.count;
	if (b->p_l[x.pair] != b->p_l[y.pair])
		return b->p_l[x.pair] > b->p_l[y.pair];
	return b->p_r[x.pair] > b->p_r[y.pair];
}

static int heap_push(bpe_learner *b, heap_ent e)
{
	size_t i;
	if (grow((void **)&b->heap, &b->cap_h, b->nh + 1, sizeof(heap_ent)))
		return -1;
	for (i = b->nh++; i > 0 && heap_less(b, b->heap[(i - 1) / 2], e); i = (i - 1) / 2)
		b->heap[i] = b->heap[(i - 1) / 2];
	b->heap[i] = e;
	return 0;
}

static heap_ent heap_pop(bpe_learner *b)
{
	heap_ent top = b->heap[0], last = b->heap[--b->nh];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= b->nh)
			break;
		if (c + 1 < b->nh && heap_less(b, b->heap[c], b->heap[c + 1]))
			c++;
		if (!heap_less(b, last, b->heap[c]))
			break;
		b->heap[i] = b->heap[c];
		i = c;
	}
	if (b->nh)
		b->heap[i] = last;
	return top;
}

static int pt_rehash(bpe_learner *b, size_t cap)
{
	uint64_t *key = malloc(cap * sizeof(uint64_t));
	int32_t *val = malloc(cap * sizeof(int32_t));
	if (!key || !val) {
		free(key);
		free(val);
		return -1;
	}
	memset(key, 0xff, cap * sizeof(uint64_t));
	for (size_t p = 0; p < b->np; p++) {
		uint64_t k = (uint64_t)(uint32_t)b->p_l[p] << 32 | (uint32_t)b->p_r[p];
		size_t h = mix64(k) & (cap - 1);
		while (key[h] != UINT64_MAX)
			h = (h + 1) & (cap - 1);
		key[h] = k;
		val[h] = (int32_t)p;
	}
	free(b->pt_key);
	free(b->pt_val);
	b->pt_key = key;
	b->pt_val = val;
	b->pt_cap = cap;
	return 0;
}

/* The pair (l, r), made (count 0) when new; -1 when out of memory. */
static int32_t pair_of(bpe_learner *b, int32_t l, int32_t r)
{
	uint64_t k = (uint64_t)(uint32_t)l << 32 | (uint32_t)r;
	size_t h, p;
	if (2 * (b->np + 1) > b->pt_cap && pt_rehash(b, b->pt_cap ? 2 * b->pt_cap : 1024))
		return -1;
	for (h = mix64(k) & (b->pt_cap - 1); b->pt_key[h] != UINT64_MAX; h = (h + 1) & (b->pt_cap - 1))
		if (b->pt_key[h] == k)
			return b->pt_val[h];
	p = b->np;
	if (p >= b->cap_p) {
		size_t c = b->cap_p ? 2 * b->cap_p : 1024;
		int32_t *l2 = realloc(b->p_l, c * sizeof(int32_t)), *r2 = l2 ? realloc(b->p_r, c * sizeof(int32_t)) : NULL;
		if (l2)
			b->p_l = l2;
		if (r2)
			b->p_r = r2;
		if (!l2 || !r2)
			return -1;
#define GROW_ARR(a)                                             \
	do {                                                    \
		void *q_ = realloc(b->a, c * sizeof(*b->a));    \
		if (!q_)                                        \
			return -1;                              \
		b->a = q_;                                      \
	} while (0)
		GROW_ARR(p_count);
		GROW_ARR(p_occ);
		GROW_ARR(p_occ_n);
		GROW_ARR(p_occ_cap);
		GROW_ARR(p_dirty);
#undef GROW_ARR
		b->cap_p = c;
	}
	b->p_l[p] = l;
	b->p_r[p] = r;
	b->p_count[p] = 0;
	b->p_occ[p] = NULL;
	b->p_occ_n[p] = b->p_occ_cap[p] = 0;
	b->p_dirty[p] = -1;
	b->np++;
	b->pt_key[h] = k;
	b->pt_val[h] = (int32_t)p;
	return (int32_t)p;
}

/* count(l, r) += delta; an increase records word w on the pair's list; the pair is marked changed
 * by merge m (pushed to the heap when the merge is done). */
static int pair_add(bpe_learner *b, int32_t l, int32_t r, int64_t delta, int32_t w, int32_t m)
{
	int32_t p = pair_of(b, l, r);
	if (p < 0)
		return -1;
	b->p_count[p] += delta;
	if (delta > 0 && (b->p_occ_n[p] == 0 || b->p_occ[p][b->p_occ_n[p] - 1] != w)) {
		if (b->p_occ_n[p] == b->p_occ_cap[p]) {
			int32_t c = b->p_occ_cap[p] ? 2 * b->p_occ_cap[p] : 4;
			int32_t *q = realloc(b->p_occ[p], (size_t)c * sizeof(int32_t));
			if (!q)
				return -1;
			b->p_occ[p] = q;
			b->p_occ_cap[p] = c;
		}
		b->p_occ[p][b->p_occ_n[p]++] = w;
	}
	if (b->p_dirty[p] != m) {
		b->p_dirty[p] = m;
		if (grow((void **)&b->dirty, &b->cap_d, b->nd + 1, sizeof(int32_t)))
			return -1;
		b->dirty[b->nd++] = p;
	}
	return 0;
}

/* The distinct words of text and their counts; symbols = bytes. */
static clg_status count_words(bpe_learner *b, const unsigned char *s, size_t n)
{
	size_t cap = 1 << 16, used = 0, nsym = 0, cap_sym = 0;
	uint64_t *hk = NULL; /* hash of the word, 0 = empty slot (hashes are made odd) */
	int32_t *hv = NULL;
	size_t *src = NULL, cap_src = 0; /* a word's first occurrence in s */
	clg_status st = CLG_OK;

	hk = calloc(cap, sizeof(uint64_t));
	hv = malloc(cap * sizeof(int32_t));
	if (!hk || !hv)
		goto oom;
	for (size_t i = 0; i < n;) {
		size_t e = tok_word_end(s, n, i), len = e - i, h;
		uint64_t k = hash_bytes(s + i, len) | 1;
		for (h = k & (cap - 1); hk[h]; h = (h + 1) & (cap - 1)) {
			int32_t w = hv[h];
			if (hk[h] == k && (size_t)b->w_n[w] == len && !memcmp(s + src[w], s + i, len))
				break;
		}
		if (hk[h]) {
			b->w_count[hv[h]]++;
		} else {
			size_t w = b->nw;
			if (grow((void **)&src, &cap_src, w + 1, sizeof(size_t)))
				goto oom;
			if (w + 1 > b->cap_w) {
				size_t c = b->cap_w ? 2 * b->cap_w : 1024;
				size_t *o = realloc(b->w_off, c * sizeof(size_t));
				int32_t *wn = o ? realloc(b->w_n, c * sizeof(int32_t)) : NULL;
				int64_t *wc = wn ? realloc(b->w_count, c * sizeof(int64_t)) : NULL;
				if (o)
					b->w_off = o;
				if (wn)
					b->w_n = wn;
				if (wc)
					b->w_count = wc;
				if (!wc)
					goto oom;
				b->cap_w = c;
			}
			if (grow((void **)&b->sym, &cap_sym, nsym + len, sizeof(int32_t)))
				goto oom;
			src[w] = i;
			b->w_off[w] = nsym;
			b->w_n[w] = (int32_t)len;
			b->w_count[w] = 1;
			for (size_t j = 0; j < len; j++)
				b->sym[nsym + j] = s[i + j];
			nsym += len;
			b->nw++;
			hk[h] = k;
			hv[h] = (int32_t)w;
			if (2 * ++used > cap) { /* rehash at half full */
				size_t nc = 2 * cap;
				uint64_t *k2 = calloc(nc, sizeof(uint64_t));
				int32_t *v2 = malloc(nc * sizeof(int32_t));
				if (!k2 || !v2) {
					free(k2);
					free(v2);
					goto oom;
				}
				for (size_t q = 0; q < cap; q++) {
					size_t g;
					if (!hk[q])
						continue;
					for (g = hk[q] & (nc - 1); k2[g]; g = (g + 1) & (nc - 1))
						;
					k2[g] = hk[q];
					v2[g] = hv[q];
				}
				free(hk);
				free(hv);
				hk = k2;
				hv = v2;
				cap = nc;
			}
		}
		i = e;
	}
	b->w_stamp = malloc((b->nw ? b->nw : 1) * sizeof(int32_t));
	if (!b->w_stamp)
		goto oom;
	for (size_t w = 0; w < b->nw; w++)
		b->w_stamp[w] = -1;
	goto out;
oom:
	st = clg_fail(CLG_ERR_OOM, "tokenizer bpe: out of host memory counting the words of %zu bytes", n);
out:
	free(hk);
	free(hv);
	free(src);
	return st;
}

static void learner_free(bpe_learner *b)
{
	for (size_t p = 0; p < b->np; p++)
		free(b->p_occ[p]);
	free(b->w_off);
	free(b->w_n);
	free(b->w_count);
	free(b->w_stamp);
	free(b->sym);
	free(b->p_l);
	free(b->p_r);
	free(b->p_count);
	free(b->p_occ);
	free(b->p_occ_n);
	free(b->p_occ_cap);
	free(b->p_dirty);
	free(b->pt_key);
	free(b->pt_val);
	free(b->heap);
	free(b->dirty);
}

/* Pushes the pairs merge m changed, with their new counts. */
static int push_dirty(bpe_learner *b)
{
	for (size_t i = 0; i < b->nd; i++) {
		int32_t p = b->dirty[i];
		if (b->p_count[p] > 0 && heap_push(b, (heap_ent){b->p_count[p], p}))
			return -1;
	}
	b->nd = 0;
	return 0;
}

/* Rewrites word w with merge m: (l, r) -> z, adjusting the neighbours' pair counts. */
static int merge_word(bpe_learner *b, int32_t w, int32_t l, int32_t r, int32_t z, int32_t m)
{
	int32_t *s = b->sym + b->w_off[w], n = b->w_n[w], j = 0;
	int64_t c = b->w_count[w];

	for (int32_t i = 0; i < n;) {
		if (i + 1 < n && s[i] == l && s[i + 1] == r) {
			if (j > 0 && (pair_add(b, s[j - 1], l, -c, w, m) || pair_add(b, s[j - 1], z, c, w, m)))
				return -1;
			if (i + 2 < n && (pair_add(b, r, s[i + 2], -c, w, m) || pair_add(b, z, s[i + 2], c, w, m)))
				return -1;
			if (pair_add(b, l, r, -c, w, m))
				return -1;
			s[j++] = z;
			i += 2;
		} else {
			s[j++] = s[i++];
		}
	}
	b->w_n[w] = j;
	return 0;
}

clg_status clg_tokenizer_bpe_learn(const char *text, size_t len, int vocab_size, clg_tokenizer **out)
{
	bpe_learner b = {0};
	int32_t *ml = NULL, *mr = NULL;
	int nm = 0, want = vocab_size - 256;
	clg_status st;

	if (!out)
		return clg_fail(CLG_ERR_INVALID, "tokenizer bpe: NULL output");
	*out = NULL;
	if (!text || len == 0)
		return clg_fail(CLG_ERR_INVALID, "tokenizer bpe: no text to learn from");
	if (vocab_size < 257 || vocab_size > CLG_BPE_MAX_VOCAB)
		return clg_fail(CLG_ERR_INVALID, "tokenizer bpe: vocabulary size %d outside [257, %d]", vocab_size,
				CLG_BPE_MAX_VOCAB);
	st = count_words(&b, (const unsigned char *)text, len);
	if (st)
		goto out;
	ml = malloc((size_t)want * sizeof(int32_t));
	mr = malloc((size_t)want * sizeof(int32_t));
	if (!ml || !mr)
		goto oom;
	for (size_t w = 0; w < b.nw; w++) {
		const int32_t *s = b.sym + b.w_off[w];
		for (int32_t i = 0; i + 1 < b.w_n[w]; i++)
			if (pair_add(&b, s[i], s[i + 1], b.w_count[w], (int32_t)w, -2))
				goto oom;
	}
	if (push_dirty(&b))
		goto oom;
	while (nm < want && b.nh > 0) {
		heap_ent e = heap_pop(&b);
		int32_t p = e.pair, l = b.p_l[p], r = b.p_r[p], z = 256 + nm, *occ, nocc;
		if (e.count != b.p_count[p])
			continue; /* stale: pushed again since with its count now */
		if (e.count < 2)
			break; /* no pair occurs twice: merging more only memorises */
		ml[nm] = l;
		mr[nm] = r;
		/* the pair's list is taken: no pair the merge adds is (l, r), it holds z */
		occ = b.p_occ[p];
		nocc = b.p_occ_n[p];
		b.p_occ[p] = NULL;
		b.p_occ_n[p] = b.p_occ_cap[p] = 0;
		for (int32_t i = 0; i < nocc; i++) {
			int32_t w = occ[i];
			if (b.w_stamp[w] == nm)
				continue;
			b.w_stamp[w] = nm;
			if (merge_word(&b, w, l, r, z, nm)) {
				free(occ);
				goto oom;
			}
		}
		free(occ);
		nm++;
		if (push_dirty(&b))
			goto oom;
	}
	if (nm == 0) {
		st = clg_fail(CLG_ERR_INVALID, "tokenizer bpe: no pair of bytes occurs twice in the %zu bytes: nothing to "
			      "learn", len);
		goto out;
	}
	st = tok_make_bpe(nm, ml, mr, out);
	ml = mr = NULL;
	goto out;
oom:
	st = clg_fail(CLG_ERR_OOM, "tokenizer bpe: out of host memory learning from %zu bytes", len);
out:
	free(ml);
	free(mr);
	learner_free(&b);
	return st;
}

/* ---- encoding --------------------------------------------------------------------------------- */
/* Merges one word of n bytes into ids (n >= 1); returns the count. */
static size_t encode_word(const clg_tokenizer *t, const unsigned char *s, size_t n, int32_t *ids)
{
	for (size_t i = 0; i < n; i++)
		ids[i] = s[i];
	while (n > 1) {
		int32_t best = -1;
		size_t j = 0;
		for (size_t i = 0; i + 1 < n; i++) {
			int32_t r = tok_merge_rank(t, ids[i], ids[i + 1]);
			if (r >= 0 && (best < 0 || r < best))
				best = r;
		}
		if (best < 0)
			break;
		for (size_t i = 0; i < n;) {
			if (i + 1 < n && ids[i] == t->merge_l[best] && ids[i + 1] == t->merge_r[best]) {
				ids[j++] = 256 + best;
				i += 2;
			} else {
				ids[j++] = ids[i++];
			}
		}
		n = j;
	}
	return n;
}

#define CACHE_MAX ((size_t)1 << 20) /* distinct words remembered by one call */

/* A cached word: its hash (odd; 0 = empty), first position in the input and length, and its
 * tokens, ids[tok, tok + ntok) of the call's output. One struct: one cache line a probe. */
typedef struct {
	uint64_t key;
	size_t pos, tok;
	uint32_t len, ntok;
} cache_ent;

static int cache_grow(cache_ent **c, size_t *cap)
{
	size_t nc = 2 * *cap;
	cache_ent *n = calloc(nc, sizeof(cache_ent));
	if (!n)
		return -1;
	for (size_t q = 0; q < *cap; q++) {
		size_t g;
		if (!(*c)[q].key)
			continue;
		for (g = (*c)[q].key & (nc - 1); n[g].key; g = (g + 1) & (nc - 1))
			;
		n[g] = (*c)[q];
	}
	free(*c);
	*c = n;
	*cap = nc;
	return 0;
}

clg_status tok_bpe_encode(const clg_tokenizer *t, const char *str, size_t len, int32_t *ids, size_t *n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t cap = 1 << 12, used = 0, out = 0;
	cache_ent *c = calloc(cap, sizeof(cache_ent));

	if (!c)
		return clg_fail(CLG_ERR_OOM, "tokenizer bpe encode: out of host memory");
	for (size_t i = 0; i < len;) {
		size_t e = tok_word_end(s, len, i), wl = e - i, h, m;
		uint64_t k;
		if (wl == 1) {
			ids[out++] = s[i++];
			continue;
		}
		k = hash_bytes(s + i, wl) | 1;
		for (h = k & (cap - 1); c[h].key; h = (h + 1) & (cap - 1))
			if (c[h].key == k && c[h].len == wl && !memcmp(s + c[h].pos, s + i, wl))
				break;
		if (c[h].key) { /* seen: copy its tokens */
			memcpy(ids + out, ids + c[h].tok, c[h].ntok * sizeof(int32_t));
			out += c[h].ntok;
			i = e;
			continue;
		}
		m = encode_word(t, s + i, wl, ids + out);
		if (used < CACHE_MAX) {
			c[h] = (cache_ent){.key = k, .pos = i, .tok = out, .len = (uint32_t)wl, .ntok = (uint32_t)m};
			if (2 * ++used > cap && cache_grow(&c, &cap)) { /* rehash at half full */
				free(c);
				return clg_fail(CLG_ERR_OOM, "tokenizer bpe encode: out of host memory for the word cache");
			}
		}
		out += m;
		i = e;
	}
	*n = out;
	free(c);
	return CLG_OK;
}
