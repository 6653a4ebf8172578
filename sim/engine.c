/* engine — see engine.h. */
#include "engine.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TASK_WAIT, TASK_QUEUED, TASK_LATENT, TASK_RUN, TASK_DONE };
/* Priorities at one instant: completions free memory and streams before latencies end, and
 * both before anything starts (starts wait in a FIFO, see eng_run). */
enum { EV_FLOW, EV_ACT };

/* Ordered by (t, key): the key holds the priority (EV_FLOW, EV_ACT) in its top bit, the
 * sequence number below it and the task in its low 32 bits, so one comparison of two words
 * ranks priority, then FIFO (sequence numbers are unique: the task never decides). A flow's
 * completion is current while the task's fseq still names its sequence number. */
struct ev {
	uint64_t t;
	uint64_t key;
};
#define EV_SEQ_MAX (1u << 31)
#define EV_KIND(v) ((uint32_t)((v).key >> 63))
#define EV_SEQ(v) ((uint32_t)((v).key >> 32) & (EV_SEQ_MAX - 1))
#define EV_TASK(v) ((uint32_t)(v).key)

/* A running task's share of the resources, kept dense for the loops every event runs. */
struct flow {
	uint32_t task, mark; /* mark: sharing generation that took it into a component */
	uint8_t nres, share; /* share: the task's capacity-only entries (bit per entry) */
	int16_t res[ENG_PATH];
	float scale[ENG_PATH];
	double remaining;  /* as of t_upd */
	double rate, next; /* current rate; the one share() just computed */
	double top;        /* the largest rate its path allows: min of capacity / scale */
	uint64_t t_upd;
};

struct effect {
	uint32_t pool;
	uint8_t when, cat;
	int64_t bytes;
};

struct edge {
	uint32_t to, next;
};

struct stream {
	char name[ENG_NAME];
	uint32_t *q, n, cap, head;
	bool busy;
};

struct state {
	int32_t res;
	double watts;
};

struct device {
	int32_t node;
	double idle, copies, watts; /* watts: its current draw (one copy) */
	bool dirty;
	uint32_t nstate;
	struct state st[4];
};

/* A registered fold (eng_fold) and what the run found. */
struct fold {
	uint32_t a[ENG_FOLD_PROBES], na, b, before, after;
	uint64_t gap;     /* units left out */
	uint64_t copies;  /* periods left out: gap / period, once found */
	uint32_t period;  /* units: the a probe the run matched (a[period - 1]), 0 none yet */
	uint32_t odd;     /* the smallest period matched that does not divide gap, 0 none */
	bool closed;      /* b captured */
	bool bad;         /* not periodic, or captured out of order */
	uint32_t cap[2];  /* the captures of the matched a probe and of b */
	struct probe_cap {
		uint32_t cap;      /* its capture */
		bool ok;           /* its window held every live task */
		size_t sig, nsig;  /* its signature in sigbuf */
		uint32_t lo, hi;   /* ids of the tasks started since */
	} pc[ENG_FOLD_PROBES];
};

/* The counters at a fold probe: per resource work and busy time (capwork), per pool its level
 * and the peak since the previous capture, each with categories (cappool). */
struct capture {
	uint64_t t, events;
	double energy;
};
/* Captures a run takes at most: every probe of every fold */
#define ENG_CAPTURES (ENG_FOLDS * (ENG_FOLD_PROBES + 1))
/* int64s a capture keeps per pool: level, its categories, peak, its categories */
#define CAP_POOL (2 * (1 + ENG_CATS))

struct node {
	char name[ENG_NAME];
	double base, copies, watts;
	double peak; /* the largest draw so far */
	uint32_t hist_n, hist_cap;
	struct eng_sample *hist;
};

#define GROW(ptr, n, cap)                                                                          \
	((n) < (cap) ? 0 : grow((void **)&(ptr), &(cap), sizeof *(ptr)))

struct eng {
	struct eng_resource *res;
	uint32_t nres, capres;
	struct eng_pool *pools;
	uint32_t npools, cappools;
	struct stream *streams;
	uint32_t nstreams, capstreams;
	struct node *nodes;
	uint32_t nnodes, capnodes;
	struct device *devs;
	uint32_t ndevs, capdevs;
	struct eng_task *tasks;
	uint32_t ntasks, captasks;
	struct effect *effs;
	uint32_t neffs, capeffs;
	struct edge *edges;
	uint32_t nedges, capedges;
	struct ev *heap;
	uint32_t nheap, capheap;
	struct flow *active; /* running tasks */
	uint32_t nactive, capactive;
	uint32_t *touched; /* resources of the component being shared */
	uint32_t ntouched, captouched;
	uint32_t *seeds; /* resources whose flows changed since the last sharing */
	uint32_t nseeds, capseeds;
	uint32_t *comp; /* flow slots of the component being shared */
	uint32_t ncomp, capcomp;
	uint32_t *solo; /* tasks started alone on their resources since the last settle */
	uint32_t nsolo, capsolo;
	uint32_t *startq; /* tasks startable at the current instant, in order */
	uint32_t nq, qhead, capq;
	uint32_t *pdirty; /* devices whose draw may have changed */
	uint32_t npdirty, cappdirty;
	int32_t marks[ENG_MARKS];
	struct eng_snapshot snaps[ENG_MARKS];
	uint32_t nmarks;
	double *snapbuf;
	size_t snapcap;
	uint32_t queue_due; /* marks whose queues are read at the instant's end */

	struct fold folds[ENG_FOLDS];
	uint32_t nfolds;
	int32_t fold_open;      /* the fold whose a was captured and b not yet, -1 none */
	uint32_t fold_next;     /* the first fold not yet found periodic (they close in order) */
	uint32_t max_started;   /* the highest task id started so far */
	uint32_t pending[ENG_CAPTURES], npending; /* probe tasks started this instant */
	struct capture caps[ENG_CAPTURES];
	uint32_t ncaps;
	double *capwork; /* per capture: each resource's work, then busy time */
	int64_t *cappool;
	size_t capwork_n, cappool_n;
	uint64_t *sigbuf; /* signatures (fold_sign) */
	size_t nsigbuf, capsigbuf;
	struct ev *evtmp; /* scratch: the pending events, sorted */
	size_t capevtmp;
	void *scratch; /* the builder's (eng_scratch) */
	size_t capscratch;
	uint64_t fold_failed;
	bool fold_stop; /* a fold was found not periodic: the run stops there */
	bool pool_stop; /* a pool passed its stop level (eng_pool_stop): the run stops there */

	uint64_t now, seq, events, t_energy;
	uint32_t gen;
	bool dirty, power_full; /* rates changed / power needs a full recount */
	bool no_history;        /* pools and nodes keep peaks only */
	double energy;
	char err[160];
};

static int grow(void **p, uint32_t *cap, size_t size)
{
	uint32_t ncap = *cap ? *cap * 2 : 16;
	void *q = realloc(*p, (size_t)ncap * size);

	if (!q)
		return -1;
	/* new slots start zeroed: the pools, streams and nodes keep history buffers across resets */
	memset((char *)q + (size_t)*cap * size, 0, (size_t)(ncap - *cap) * size);
	*p = q;
	*cap = ncap;
	return 0;
}

static int fail(struct eng *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->err, sizeof e->err, fmt, ap);
	va_end(ap);
	return -1;
}

struct eng *eng_new(void)
{
	return calloc(1, sizeof(struct eng));
}

void eng_free(struct eng *e)
{
	if (!e)
		return;
	for (uint32_t i = 0; i < e->cappools; i++)
		free(e->pools[i].hist);
	for (uint32_t i = 0; i < e->capstreams; i++)
		free(e->streams[i].q);
	for (uint32_t i = 0; i < e->capnodes; i++)
		free(e->nodes[i].hist);
	for (uint32_t i = 0; i < e->capres; i++)
		free(e->res[i].fl);
	free(e->res);
	free(e->pools);
	free(e->streams);
	free(e->nodes);
	free(e->devs);
	free(e->tasks);
	free(e->effs);
	free(e->edges);
	free(e->heap);
	free(e->active);
	free(e->touched);
	free(e->seeds);
	free(e->comp);
	free(e->solo);
	free(e->startq);
	free(e->pdirty);
	free(e->snapbuf);
	free(e->capwork);
	free(e->cappool);
	free(e->sigbuf);
	free(e->evtmp);
	free(e->scratch);
	free(e);
}

void *eng_scratch(struct eng *e, size_t bytes)
{
	if (bytes > e->capscratch) {
		size_t cap = e->capscratch ? e->capscratch : 4096;
		while (cap < bytes && cap <= SIZE_MAX / 2)
			cap *= 2;
		if (cap < bytes)
			cap = bytes;
		void *p = realloc(e->scratch, cap);
		if (!p)
			return NULL;
		e->scratch = p;
		e->capscratch = cap;
	}
	return e->scratch;
}

void eng_reset(struct eng *e)
{
	e->nres = e->npools = e->nstreams = e->nnodes = e->ndevs = 0;
	e->ntasks = e->neffs = e->nedges = e->nheap = e->nactive = e->ntouched = e->nmarks = 0;
	e->nfolds = 0;
	e->fold_failed = 0;
	e->err[0] = '\0';
}

void eng_keep_history(struct eng *e, bool keep)
{
	e->no_history = !keep;
}

bool eng_keeps_history(const struct eng *e)
{
	return !e->no_history;
}

const char *eng_error(const struct eng *e)
{
	return e->err;
}

/* A name, cut to ENG_NAME - 1 bytes (every configuration names its resources and streams:
 * snprintf showed up at 5 % of a search's profile). */
static void copy_name(char *dst, const char *src)
{
	size_t n = src ? strnlen(src, ENG_NAME - 1) : 0;
	memcpy(dst, src ? src : "", n);
	dst[n] = '\0';
}

int eng_resource(struct eng *e, const char *name, double capacity, const char *unit)
{
	if (!(capacity > 0) || !isfinite(capacity))
		return fail(e, "resource %s: capacity %g must be positive", name, capacity);
	if (e->nres >= INT16_MAX || GROW(e->res, e->nres, e->capres))
		return fail(e, "resource %s: out of memory", name);
	struct eng_resource *r = &e->res[e->nres];
	uint32_t *keep = r->fl, keepcap = r->capfl;
	memset(r, 0, sizeof *r);
	r->fl = keep;
	r->capfl = keepcap;
	copy_name(r->name, name);
	r->capacity = capacity;
	r->unit = unit;
	r->dev = -1;
	return (int)e->nres++;
}

int eng_pool(struct eng *e, const char *name, double capacity, double scale)
{
	if (GROW(e->pools, e->npools, e->cappools))
		return fail(e, "pool %s: out of memory", name);
	struct eng_pool *p = &e->pools[e->npools];
	struct eng_sample *keep = p->hist;
	uint32_t keepcap = p->hist_cap;
	memset(p, 0, sizeof *p);
	p->hist = keep;
	p->hist_cap = keepcap;
	copy_name(p->name, name);
	p->capacity = capacity;
	p->scale = scale > 0 ? scale : 1;
	return (int)e->npools++;
}

int eng_pool_stop(struct eng *e, int pool, int64_t level)
{
	if (pool < 0 || (uint32_t)pool >= e->npools || level <= 0)
		return fail(e, "pool stop: bad pool %d or level", pool);
	e->pools[pool].stop = level;
	return 0;
}

bool eng_pool_stopped(const struct eng *e)
{
	return e->pool_stop;
}

int eng_stream(struct eng *e, const char *name)
{
	if (GROW(e->streams, e->nstreams, e->capstreams))
		return fail(e, "stream %s: out of memory", name);
	struct stream *s = &e->streams[e->nstreams];
	uint32_t *keep = s->q, keepcap = s->cap;
	memset(s, 0, sizeof *s);
	s->q = keep;
	s->cap = keepcap;
	copy_name(s->name, name);
	return (int)e->nstreams++;
}

int eng_node(struct eng *e, const char *name, double base_watts, double copies)
{
	if (GROW(e->nodes, e->nnodes, e->capnodes))
		return fail(e, "node %s: out of memory", name);
	struct node *n = &e->nodes[e->nnodes];
	struct eng_sample *keep = n->hist;
	uint32_t keepcap = n->hist_cap;
	memset(n, 0, sizeof *n);
	n->hist = keep;
	n->hist_cap = keepcap;
	copy_name(n->name, name);
	n->base = base_watts;
	n->copies = copies > 0 ? copies : 1;
	return (int)e->nnodes++;
}

int eng_device(struct eng *e, int node, const char *name, double idle_watts, double copies)
{
	if (node < 0 || (uint32_t)node >= e->nnodes)
		return fail(e, "device %s: no node %d", name, node);
	if (GROW(e->devs, e->ndevs, e->capdevs))
		return fail(e, "device %s: out of memory", name);
	e->devs[e->ndevs] = (struct device){.node = node, .idle = idle_watts, .copies = copies};
	return (int)e->ndevs++;
}

int eng_device_state(struct eng *e, int dev, int res, double watts)
{
	if (dev < 0 || (uint32_t)dev >= e->ndevs || res < 0 || (uint32_t)res >= e->nres)
		return fail(e, "device state: bad device %d or resource %d", dev, res);
	struct device *d = &e->devs[dev];
	if (d->nstate >= sizeof d->st / sizeof d->st[0])
		return fail(e, "device %d: too many states", dev);
	d->st[d->nstate++] = (struct state){res, watts};
	struct eng_resource *r = &e->res[res];
	r->dev = r->dev == -1 || r->dev == dev ? dev : -2;
	return 0;
}

int eng_task(struct eng *e, const char *name, int stream, double work, uint64_t latency_ns,
	     int nres, const int *res, const float *scale)
{
	if (stream >= (int)e->nstreams || nres < 0 || nres > ENG_PATH || !(work >= 0) ||
	    !isfinite(work) || (work > 0 && nres == 0))
		return fail(e, "task %s: bad stream, path or work", name);
	if (GROW(e->tasks, e->ntasks, e->captasks))
		return fail(e, "task %s: out of memory", name);
	struct eng_task *t = &e->tasks[e->ntasks];
	memset(t, 0, sizeof *t);
	t->name = name;
	t->stream = stream;
	t->work = work;
	t->latency_ns = latency_ns;
	t->succ = UINT32_MAX;
	t->nres = (uint8_t)nres;
	for (int i = 0; i < nres; i++) {
		if (res[i] < 0 || (uint32_t)res[i] >= e->nres)
			return fail(e, "task %s: no resource %d", name, res[i]);
		t->res[i] = (int16_t)res[i];
		t->scale[i] = scale ? scale[i] : 1.0f;
		if (!(t->scale[i] > 0))
			return fail(e, "task %s: scale must be positive", name);
	}
	if (stream >= 0) {
		struct stream *s = &e->streams[stream];
		if (GROW(s->q, s->n, s->cap))
			return fail(e, "task %s: out of memory", name);
		s->q[s->n++] = e->ntasks;
	}
	return (int)e->ntasks++;
}

int eng_task_share(struct eng *e, int task, int res, float scale)
{
	if (task < 0 || (uint32_t)task >= e->ntasks || res < 0 || (uint32_t)res >= e->nres ||
	    !(scale > 0))
		return fail(e, "share: bad task %d, resource %d or scale", task, res);
	struct eng_task *t = &e->tasks[task];
	if (t->nres >= ENG_PATH)
		return fail(e, "task %s: its path is full", t->name);
	for (int i = 0; i < t->nres; i++)
		if (t->res[i] == res)
			return fail(e, "task %s: resource %d is already on its path", t->name, res);
	t->res[t->nres] = (int16_t)res;
	t->scale[t->nres] = scale;
	t->share |= (uint8_t)(1u << t->nres);
	t->nres++;
	return 0;
}

int eng_dep(struct eng *e, int before, int after)
{
	if (before < 0 || after < 0 || (uint32_t)before >= e->ntasks ||
	    (uint32_t)after >= e->ntasks || before == after)
		return fail(e, "dependency %d -> %d: bad task", before, after);
	if (GROW(e->edges, e->nedges, e->capedges))
		return fail(e, "dependency: out of memory");
	e->edges[e->nedges] = (struct edge){(uint32_t)after, e->tasks[before].succ};
	e->tasks[before].succ = e->nedges++;
	e->tasks[after].ndeps++;
	return 0;
}

int eng_effect(struct eng *e, int task, int pool, int cat, int64_t bytes, int when)
{
	if (task < 0 || (uint32_t)task >= e->ntasks || pool < 0 || (uint32_t)pool >= e->npools ||
	    cat < 0 || cat >= ENG_CATS)
		return fail(e, "effect: bad task %d, pool %d or category %d", task, pool, cat);
	if (GROW(e->effs, e->neffs, e->capeffs))
		return fail(e, "effect: out of memory");
	struct eng_task *t = &e->tasks[task];
	if (t->neff && t->eff + t->neff != e->neffs)
		return fail(e, "task %s: effects must be added together", t->name);
	if (!t->neff)
		t->eff = e->neffs;
	e->effs[e->neffs++] = (struct effect){(uint32_t)pool, (uint8_t)when, (uint8_t)cat, bytes};
	t->neff++;
	return 0;
}

int eng_mark(struct eng *e, int task)
{
	if (task < 0 || (uint32_t)task >= e->ntasks || e->nmarks >= ENG_MARKS)
		return fail(e, "mark: bad task or too many marks");
	e->marks[e->nmarks] = task;
	return (int)e->nmarks++;
}

/* ---- event heap: (t, kind as priority, seq) ---- */

static bool ev_less(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->key < b->key);
}

/* Queues an event; its sequence number goes to *seq when asked. */
static int push(struct eng *e, uint64_t t, uint32_t kind, uint32_t id, uint32_t *seq)
{
	if (GROW(e->heap, e->nheap, e->capheap))
		return fail(e, "event queue: out of memory");
	if (e->seq >= EV_SEQ_MAX)
		return fail(e, "event queue: more than %u events in one run", EV_SEQ_MAX);
	if (seq)
		*seq = (uint32_t)e->seq;
	struct ev v = {t, (uint64_t)kind << 63 | e->seq++ << 32 | id};
	uint32_t i = e->nheap++;
	while (i > 0) {
		uint32_t p = (i - 1) / 2;
		if (!ev_less(&v, &e->heap[p]))
			break;
		e->heap[i] = e->heap[p];
		i = p;
	}
	e->heap[i] = v;
	return 0;
}

static struct ev pop(struct eng *e)
{
	struct ev top = e->heap[0], last = e->heap[--e->nheap];
	uint32_t i = 0, n = e->nheap;
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && ev_less(&e->heap[c + 1], &e->heap[c]))
			c++;
		if (!ev_less(&e->heap[c], &last))
			break;
		e->heap[i] = e->heap[c];
		i = c;
	}
	if (n)
		e->heap[i] = last;
	return top;
}

/* A completion computed for a rate the flow no longer has (or a flow no longer running). */
static bool stale(const struct eng *e, const struct ev *v)
{
	const struct eng_task *t = &e->tasks[EV_TASK(*v)];
	return EV_KIND(*v) == EV_FLOW && (t->state != TASK_RUN || t->fseq != EV_SEQ(*v));
}

/* ---- histories ---- */

/* Appends (now, v). Within one instant a history keeps the highest level reached and the last:
 * one sample while the level only rises, two (the highest, then the last) once it falls back,
 * so a level taken and released at one instant stays visible as a spike, as the peak counts it. */
static int sample(struct eng *e, struct eng_sample **h, uint32_t *n, uint32_t *cap, double v)
{
	struct eng_sample *last = *n ? &(*h)[*n - 1] : NULL;
	if (last && last->t_ns == e->now) {
		struct eng_sample *top = *n > 1 && last[-1].t_ns == e->now ? &last[-1] : NULL;
		if (top) { /* [highest, last] */
			top->value = fmax(top->value, v);
			last->value = v;
			return 0;
		}
		if (v >= last->value) {
			last->value = v;
			return 0;
		}
	}
	if (GROW(*h, *n, *cap))
		return fail(e, "history: out of memory");
	(*h)[(*n)++] = (struct eng_sample){e->now, v};
	return 0;
}

/* Whether a pool's built level plus its fold offset is the whole graph's now (eng_pool_stop): no
 * task past the last a probe of the first fold not yet found periodic has started. */
static bool stop_exact(const struct eng *e)
{
	return e->fold_next >= e->nfolds || e->max_started <= e->folds[e->fold_next].a[0];
}

static int apply_effects(struct eng *e, struct eng_task *t, int when)
{
	for (uint32_t i = t->eff; i < t->eff + t->neff; i++) {
		struct effect *f = &e->effs[i];
		if (f->when != when)
			continue;
		struct eng_pool *p = &e->pools[f->pool];
		if (__builtin_add_overflow(p->cur, f->bytes, &p->cur) ||
		    __builtin_add_overflow(p->cur_cat[f->cat], f->bytes, &p->cur_cat[f->cat]))
			return fail(e, "pool %s: its byte count overflows 64 bits: reduce --seq or "
				       "--batch",
				    p->name);
		if (p->cur > p->peak) {
			p->peak = p->cur;
			p->peak_ns = e->now;
			memcpy(p->peak_cat, p->cur_cat, sizeof p->peak_cat);
		}
		if (p->stop && p->cur + p->off > p->stop && stop_exact(e))
			e->pool_stop = true;
		if (p->cur > p->seg_peak) {
			p->seg_peak = p->cur;
			memcpy(p->seg_cat, p->cur_cat, sizeof p->seg_cat);
		}
		if (!e->no_history && sample(e, &p->hist, &p->hist_n, &p->hist_cap, (double)p->cur))
			return -1;
	}
	return 0;
}

/* ---- power ---- */

static double device_watts(const struct eng *e, const struct device *v)
{
	for (uint32_t s = 0; s < v->nstate; s++)
		if (e->res[v->st[s].res].nflows)
			return v->st[s].watts;
	return v->idle;
}

static int sample_nodes(struct eng *e)
{
	for (uint32_t n = 0; n < e->nnodes; n++) {
		struct node *o = &e->nodes[n];
		if (o->watts > o->peak)
			o->peak = o->watts;
		if (e->no_history || (o->hist_n && o->hist[o->hist_n - 1].value == o->watts))
			continue;
		if (sample(e, &o->hist, &o->hist_n, &o->hist_cap, o->watts))
			return -1;
	}
	return 0;
}

/* Every device and node from scratch (at the start, or when a resource feeds several
 * devices). */
/* Energy up to now at the draw that held since the last change. */
static void accrue_energy(struct eng *e)
{
	double dt = (double)(e->now - e->t_energy) * 1e-9;
	for (uint32_t n = 0; n < e->nnodes; n++)
		e->energy += e->nodes[n].watts * e->nodes[n].copies * dt;
	e->t_energy = e->now;
}

static int update_power(struct eng *e)
{
	accrue_energy(e);
	for (uint32_t n = 0; n < e->nnodes; n++)
		e->nodes[n].watts = e->nodes[n].base;
	for (uint32_t d = 0; d < e->ndevs; d++) {
		struct device *v = &e->devs[d];
		v->watts = device_watts(e, v);
		v->dirty = false;
		e->nodes[v->node].watts += v->watts * v->copies;
	}
	e->npdirty = 0;
	e->power_full = false;
	return sample_nodes(e);
}

/* A resource turned busy or idle: its device's draw may change. */
static void power_touch(struct eng *e, const struct eng_resource *r)
{
	if (r->dev == -1)
		return;
	if (r->dev == -2 || GROW(e->pdirty, e->npdirty, e->cappdirty)) {
		e->power_full = true;
		return;
	}
	struct device *v = &e->devs[r->dev];
	if (!v->dirty) {
		v->dirty = true;
		e->pdirty[e->npdirty++] = (uint32_t)r->dev;
	}
}

/* Only the devices whose resources changed, nodes by difference. */
static int update_power_dirty(struct eng *e)
{
	if (e->power_full)
		return update_power(e);
	if (!e->npdirty)
		return 0;
	accrue_energy(e);
	for (uint32_t i = 0; i < e->npdirty; i++) {
		struct device *v = &e->devs[e->pdirty[i]];
		double w = device_watts(e, v);
		e->nodes[v->node].watts += (w - v->watts) * v->copies;
		v->watts = w;
		v->dirty = false;
	}
	e->npdirty = 0;
	return sample_nodes(e);
}

/* ---- running ---- */

/* Work a flow did since its last update, credited to its resources; remaining follows. */
static void flow_catch_up(struct eng *e, struct flow *f)
{
	double done = f->rate * (double)(e->now - f->t_upd) * 1e-9;
	if (done > f->remaining)
		done = f->remaining;
	f->remaining -= done;
	for (int r = 0; r < f->nres; r++)
		if (!(f->share >> r & 1))
			e->res[f->res[r]].work += done * f->scale[r];
	f->t_upd = e->now;
}

/* A resource turned busy (+1) or idle (-1): busy time and its device's power. */
static void res_turn(struct eng *e, struct eng_resource *r, bool busy)
{
	if (busy)
		r->busy_since = e->now;
	else
		r->busy_ns += (double)(e->now - r->busy_since);
	power_touch(e, r);
}

/* A resource whose set of flows changed: its component is shared again at the next settle. */
static int seed(struct eng *e, int16_t r)
{
	struct eng_resource *s = &e->res[r];
	if (s->seed)
		return 0;
	if (GROW(e->seeds, e->nseeds, e->capseeds))
		return fail(e, "out of memory");
	s->seed = 1;
	e->seeds[e->nseeds++] = (uint32_t)r;
	return 0;
}

/*
 * A resource binds only while two or more running flows, each at the largest rate its path allows
 * (its top), would together ask for more than its capacity; until then it denies no flow anything, so
 * sharing leaves it out: host DRAM, which every copy and CPU update crosses, mostly links nothing.
 * Leaving out resources that cannot bind, and bounding each flow by its top instead, gives the
 * same max-min fair rates: every allocation the full problem allows respects the tops, and the
 * relaxed problem's fair allocation already fits the resources left out. Declaring a resource
 * binding costs time, never correctness, hence the margin against rounding in the demand sums.
 */
#define BIND_MARGIN 1e-9

static bool binds(const struct eng_resource *s)
{
	/* a flow alone on a resource runs at most at its capacity already (its top) */
	return s->nfl > 1 && s->demand > s->capacity * (1.0 - BIND_MARGIN);
}

/* Takes a resource into the component being shared (once per generation). */
static int take_res(struct eng *e, uint32_t r)
{
	struct eng_resource *s = &e->res[r];
	if (s->mark == e->gen)
		return 0;
	if (GROW(e->touched, e->ntouched, e->captouched))
		return fail(e, "out of memory");
	s->mark = e->gen;
	s->level = s->capacity;
	s->weight = 0;
	s->unfixed = 0;
	e->touched[e->ntouched++] = r;
	return 0;
}

/* Takes a running flow into the component, and the resources on its path that bind. */
static int take_flow(struct eng *e, uint32_t slot)
{
	struct flow *k = &e->active[slot];
	if (k->mark == e->gen)
		return 0;
	k->mark = e->gen;
	if (GROW(e->comp, e->ncomp, e->capcomp))
		return fail(e, "out of memory");
	e->comp[e->ncomp++] = slot;
	for (int r = 0; r < k->nres; r++)
		if (binds(&e->res[k->res[r]]) && take_res(e, (uint32_t)k->res[r]))
			return -1;
	return 0;
}

/* Takes the running flows of resource s into the component. */
static int take_flows(struct eng *e, const struct eng_resource *s)
{
	for (uint32_t j = 0; j < s->nfl; j++)
		if (take_flow(e, e->tasks[s->fl[j]].fslot))
			return -1;
	return 0;
}

/* Fixes flow k at rate v: its share leaves the binding resources of the component. */
static void fix(struct eng *e, struct flow *k, double v)
{
	k->next = v;
	for (int r = 0; r < k->nres; r++) {
		struct eng_resource *s = &e->res[k->res[r]];
		if (s->mark != e->gen)
			continue;
		s->level -= v * k->scale[r];
		s->weight -= k->scale[r];
		s->unfixed--;
	}
}

/*
 * Max-min fair rates by progressive filling. Components of flows linked by binding resources
 * are independent, so only the components of the resources whose flows changed are filled
 * again; the other flows keep their rates (their next stays equal to their rate).
 */
static int share(struct eng *e)
{
	e->gen++;
	e->ntouched = e->ncomp = 0;
	/* a seed's flows are shared again; the component grows through it while it binds */
	for (uint32_t i = 0; i < e->nseeds; i++) {
		struct eng_resource *s = &e->res[e->seeds[i]];
		s->seed = 0;
		if (binds(s) ? take_res(e, e->seeds[i]) : take_flows(e, s))
			return -1;
	}
	e->nseeds = 0;
	/* grow the component: flows on its resources, their binding resources, and so on */
	for (uint32_t q = 0; q < e->ntouched; q++)
		if (take_flows(e, &e->res[e->touched[q]]))
			return -1;
	for (uint32_t i = 0; i < e->ncomp; i++) {
		struct flow *k = &e->active[e->comp[i]];
		k->next = -1;
		for (int r = 0; r < k->nres; r++) {
			struct eng_resource *s = &e->res[k->res[r]];
			if (s->mark != e->gen)
				continue;
			s->weight += k->scale[r];
			s->unfixed++;
		}
	}
	/* the rate rises for every unfixed flow together; each stops at its top or where a
	 * resource on its path runs full, whichever comes first */
	for (uint32_t left = e->ncomp; left;) {
		int best = -1;
		double lvl = INFINITY, top = INFINITY;
		for (uint32_t r = 0; r < e->ntouched; r++) {
			struct eng_resource *s = &e->res[e->touched[r]];
			if (!s->unfixed)
				continue;
			double v = (s->level > 0 ? s->level : 0) / s->weight;
			if (v < lvl) {
				lvl = v;
				best = (int)e->touched[r];
			}
		}
		for (uint32_t i = 0; i < e->ncomp; i++) {
			const struct flow *k = &e->active[e->comp[i]];
			if (k->next < 0 && k->top < top)
				top = k->top;
		}
		bool by_top = top <= lvl; /* flows reach their tops before any resource runs full */
		for (uint32_t i = 0; i < e->ncomp; i++) {
			struct flow *k = &e->active[e->comp[i]];
			if (k->next >= 0)
				continue;
			bool through = by_top && k->top <= top;
			for (int r = 0; r < k->nres && !by_top; r++)
				through |= k->res[r] == best;
			if (!through)
				continue;
			fix(e, k, by_top ? top : lvl);
			left--;
		}
		if (best < 0 && !(top < INFINITY))
			break;
	}
	return 0;
}

/* Adds or removes task id on a resource's list of running tasks. */
static int res_add(struct eng *e, struct eng_resource *s, uint32_t id)
{
	if (GROW(s->fl, s->nfl, s->capfl))
		return fail(e, "out of memory");
	s->fl[s->nfl++] = id;
	return 0;
}

static void res_del(struct eng_resource *s, uint32_t id)
{
	for (uint32_t j = 0; j < s->nfl; j++)
		if (s->fl[j] == id) {
			s->fl[j] = s->fl[--s->nfl];
			return;
		}
}

static int try_stream(struct eng *e, int32_t sid);

/* A task startable now goes to the instant's start queue. */
static int enqueue(struct eng *e, uint32_t id)
{
	if (GROW(e->startq, e->nq, e->capq))
		return fail(e, "out of memory");
	e->startq[e->nq++] = id;
	return 0;
}

/* Whether a task's effects at its start free more than they take (on all pools together). */
static bool frees_at_start(const struct eng *e, const struct eng_task *t)
{
	int64_t net = 0;
	for (uint32_t i = t->eff; i < t->eff + t->neff; i++)
		if (e->effs[i].when == ENG_AT_START)
			net += e->effs[i].bytes;
	return net < 0;
}

/*
 * The tasks startable at one instant start in the order they became so, except that those
 * whose start frees memory go first (stably): memory released at an instant is there for what
 * the same instant allocates, as the caching allocator reuses a block freed on the stream
 * before it hands out new memory. Two tasks starting at one instant stand for work the
 * program issues one after the other, and the order the graph happened to make them ready in
 * is not the program's: a copy on its own stream must not count against a peak that the
 * compute starting beside it relieves (a checkpoint prefetched while the loss's backward
 * frees the logits). A task's own effects keep their order.
 */
static void frees_first(struct eng *e)
{
	uint32_t w = e->qhead;
	for (uint32_t i = e->qhead; i < e->nq; i++) {
		uint32_t id = e->startq[i];
		if (!e->tasks[id].neff || !frees_at_start(e, &e->tasks[id]))
			continue;
		memmove(&e->startq[w + 1], &e->startq[w], (size_t)(i - w) * sizeof *e->startq);
		e->startq[w++] = id;
	}
}

static int ready(struct eng *e, uint32_t id)
{
	struct eng_task *t = &e->tasks[id];
	if (t->stream >= 0)
		return try_stream(e, t->stream);
	t->state = TASK_QUEUED;
	return enqueue(e, id);
}

static int try_stream(struct eng *e, int32_t sid)
{
	struct stream *s = &e->streams[sid];
	if (s->busy || s->head >= s->n)
		return 0;
	uint32_t id = s->q[s->head];
	struct eng_task *t = &e->tasks[id];
	if (t->ndeps || t->state != TASK_WAIT)
		return 0;
	s->busy = true;
	t->state = TASK_QUEUED;
	return enqueue(e, id);
}

static void snapshot(struct eng *e, int m)
{
	struct eng_snapshot *s = &e->snaps[m];
	s->t_ns = e->now;
	accrue_energy(e);
	s->energy_j = e->energy;
	for (uint32_t i = 0; i < e->nactive; i++)
		flow_catch_up(e, &e->active[i]);
	for (uint32_t r = 0; r < e->nres; r++) {
		const struct eng_resource *x = &e->res[r];
		s->busy_ns[r] = x->busy_ns + (x->nflows ? (double)(e->now - x->busy_since) : 0);
		s->work[r] = x->work;
	}
	e->queue_due |= 1u << m;
	s->taken = true;
	s->ncap = e->ncaps;
}

/* A mark's queued work, read at the end of the instant its task ended (so that what the
 * instant's ties made ready or started counts alike at every mark): the work left of the
 * running flows, and of the tasks whose dependencies are done that wait for their stream's
 * turn. Reads the flows without catching them up, which would round the run differently. */
static void snapshot_queues(struct eng *e, int m)
{
	double *q = e->snaps[m].queued;
	memset(q, 0, e->nres * sizeof *q);
	for (uint32_t i = 0; i < e->nactive; i++) {
		const struct flow *f = &e->active[i];
		double left = f->remaining - f->rate * (double)(e->now - f->t_upd) * 1e-9;
		for (int r = 0; r < f->nres; r++)
			if (!(f->share >> r & 1))
				q[f->res[r]] += fmax(left, 0) * f->scale[r];
	}
	for (uint32_t k = 0; k < e->nstreams; k++) {
		const struct stream *st = &e->streams[k];
		for (uint32_t i = st->head; i < st->n && !e->tasks[st->q[i]].ndeps; i++) {
			const struct eng_task *t = &e->tasks[st->q[i]];
			if (t->state == TASK_RUN || t->state == TASK_DONE)
				continue; /* its flow is counted above */
			for (int r = 0; r < t->nres; r++)
				if (!(t->share >> r & 1))
					q[t->res[r]] += t->work * t->scale[r];
		}
	}
}

/* ---- folds ---- */

int eng_fold(struct eng *e, const int *a, uint32_t na, int b, uint32_t before, uint32_t after,
	     uint64_t gap)
{
	bool bad = na < 1 || na > ENG_FOLD_PROBES || b < 0 || (uint32_t)b >= e->ntasks ||
		   e->nfolds >= ENG_FOLDS || gap < 1 || e->tasks[b].probe;
	for (uint32_t j = 0; j < na && !bad; j++) /* a[0] the latest, each before the next */
		bad = a[j] < 0 || a[j] >= (j ? a[j - 1] : b) || e->tasks[a[j]].probe;
	if (bad)
		return fail(e, "fold: bad probes or too many folds");
	struct fold *f = &e->folds[e->nfolds];
	*f = (struct fold){.na = na, .b = (uint32_t)b, .before = before, .after = after, .gap = gap};
	for (uint32_t j = 0; j < na; j++) {
		f->a[j] = (uint32_t)a[j];
		e->tasks[a[j]].probe = (uint8_t)(e->nfolds + 1);
	}
	e->tasks[b].probe = (uint8_t)(e->nfolds + 1);
	return (int)e->nfolds++;
}

uint32_t eng_fold_period(const struct eng *e, int fold)
{
	return fold >= 0 && (uint32_t)fold < e->nfolds ? e->folds[fold].odd : 0;
}

uint64_t eng_fold_failed(const struct eng *e)
{
	return e->fold_failed;
}

/* Grows *p to hold need elements of size bytes (at least). 0 ok, -1 out of memory. */
static int reserve(struct eng *e, void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	void *q = realloc(*p, need * size);
	if (!q)
		return fail(e, "out of memory");
	*p = q;
	*cap = need;
	return 0;
}

static uint64_t bits(double v)
{
	uint64_t u;
	memcpy(&u, &v, sizeof u);
	return u;
}

/*
 * Appends to sigbuf what steers the run from now on, task ids relative to base, for fold f's
 * window [base - before, base + after); *ok false when a live task lies outside it. Streams whose
 * next task lies outside the window name it absolutely: nothing ran on them in between.
 */
static int fold_sign(struct eng *e, const struct fold *f, uint32_t base, bool *ok)
{
	int64_t lo = (int64_t)base - f->before, hi = (int64_t)base + f->after;
#define IN(id) ((int64_t)(id) >= lo && (int64_t)(id) < hi)
#define PUT(v) (e->sigbuf[e->nsigbuf++] = (uint64_t)(v))
	*ok = lo >= 0 && hi <= (int64_t)e->ntasks;
	if (!*ok)
		return 0;
	/* room for all of it: each flow counted on every resource of its path */
	size_t most = 2 + (5 + ENG_PATH) * (size_t)e->nactive + 3 * (size_t)e->nheap +
		      3 * (size_t)e->nres + 3 * (size_t)e->nstreams + 2 * (size_t)(hi - lo);
	if (e->nsigbuf + most > e->capsigbuf &&
	    reserve(e, (void **)&e->sigbuf, &e->capsigbuf, 2 * (e->nsigbuf + most),
		    sizeof *e->sigbuf))
		return -1;
	PUT(e->nactive);
	for (uint32_t i = 0; i < e->nactive; i++) {
		const struct flow *k = &e->active[i];
		if (!IN(k->task))
			return *ok = false, 0;
		PUT(k->task - base);
		PUT(bits(k->remaining));
		PUT(bits(k->rate));
		PUT(bits(k->next));
		PUT(e->now - k->t_upd);
	}
	uint32_t n = 0;
	if (reserve(e, (void **)&e->evtmp, &e->capevtmp, e->nheap, sizeof *e->evtmp))
		return -1;
	for (uint32_t i = 0; i < e->nheap; i++) { /* in order: an insertion sort (a few dozen) */
		if (stale(e, &e->heap[i]))
			continue;
		uint32_t k = n++;
		for (; k > 0 && ev_less(&e->heap[i], &e->evtmp[k - 1]); k--)
			e->evtmp[k] = e->evtmp[k - 1];
		e->evtmp[k] = e->heap[i];
	}
	PUT(n);
	for (uint32_t i = 0; i < n; i++) {
		if (!IN(EV_TASK(e->evtmp[i])))
			return *ok = false, 0;
		PUT(e->evtmp[i].t - e->now);
		PUT(EV_KIND(e->evtmp[i]));
		PUT(EV_TASK(e->evtmp[i]) - base);
	}
	for (uint32_t r = 0; r < e->nres; r++) {
		const struct eng_resource *x = &e->res[r];
		PUT(x->nfl);
		PUT(x->nflows);
		PUT(bits(x->demand));
		for (uint32_t j = 0; j < x->nfl; j++)
			PUT(x->fl[j] - base); /* running: in the window, checked above */
	}
	for (uint32_t q = 0; q < e->nstreams; q++) {
		const struct stream *st = &e->streams[q];
		PUT(st->busy);
		uint32_t id = st->head < st->n ? st->q[st->head] : UINT32_MAX;
		PUT(id == UINT32_MAX ? 0 : IN(id) ? 1 : 2);
		PUT(IN(id) ? id - base : id);
	}
	for (int64_t id = lo; id < hi; id++) {
		PUT(e->tasks[id].state);
		PUT(e->tasks[id].ndeps);
	}
	return 0;
#undef IN
#undef PUT
}

/* The counters and pool levels at a probe, into capture e->ncaps. */
static int fold_counters(struct eng *e)
{
	uint32_t c = e->ncaps;
	size_t nr = 2 * (size_t)e->nres, np = CAP_POOL * (size_t)e->npools;
	if (reserve(e, (void **)&e->capwork, &e->capwork_n, (c + 1) * nr, sizeof *e->capwork) ||
	    reserve(e, (void **)&e->cappool, &e->cappool_n, (c + 1) * np, sizeof *e->cappool))
		return -1;
	accrue_energy(e);
	e->caps[c] = (struct capture){e->now, e->events, e->energy};
	double *w = e->capwork + c * nr, *busy = w + e->nres;
	for (uint32_t r = 0; r < e->nres; r++) {
		const struct eng_resource *x = &e->res[r];
		w[r] = x->work;
		busy[r] = x->busy_ns + (x->nflows ? (double)(e->now - x->busy_since) : 0);
	}
	/* the running flows' work since their last update, without touching them */
	for (uint32_t i = 0; i < e->nactive; i++) {
		const struct flow *k = &e->active[i];
		double done = fmin(k->rate * (double)(e->now - k->t_upd) * 1e-9, k->remaining);
		for (int r = 0; r < k->nres; r++)
			if (!(k->share >> r & 1))
				w[k->res[r]] += done * k->scale[r];
	}
	int64_t *pv = e->cappool + c * np;
	for (uint32_t p = 0; p < e->npools; p++, pv += CAP_POOL) {
		struct eng_pool *x = &e->pools[p];
		pv[0] = x->cur;
		memcpy(pv + 1, x->cur_cat, sizeof x->cur_cat);
		pv[1 + ENG_CATS] = x->seg_peak;
		memcpy(pv + 2 + ENG_CATS, x->seg_cat, sizeof x->seg_cat);
		x->seg_peak = x->cur;
		memcpy(x->seg_cat, x->cur_cat, sizeof x->seg_cat);
	}
	e->ncaps++;
	return 0;
}

/* Fold fi, found periodic: its left-out periods' net bytes (copies x the period's, as unfold
 * adds them) go to each pool's offset, and a pool whose level with it passes its stop stops
 * the run (eng_pool_stop). */
static void fold_offsets(struct eng *e, const struct fold *f, uint32_t fi)
{
	size_t np = CAP_POOL * (size_t)e->npools;
	const int64_t *a = e->cappool + f->cap[0] * np, *b = e->cappool + f->cap[1] * np;
	e->fold_next = fi + 1;
	for (uint32_t p = 0; p < e->npools; p++, a += CAP_POOL, b += CAP_POOL) {
		struct eng_pool *x = &e->pools[p];
		x->off += (int64_t)f->copies * (b[0] - a[0]);
		for (int c = 0; c < ENG_CATS; c++)
			x->off_cat[c] += (int64_t)f->copies * (b[1 + c] - a[1 + c]);
		if (x->stop && x->cur + x->off > x->stop && stop_exact(e))
			e->pool_stop = true;
	}
}

/* Probe task id of fold fi started this instant: its capture and, at b, the comparison with
 * the a probes' (the nearest period that matches and divides the gap). */
static int fold_capture(struct eng *e, uint32_t fi, uint32_t id)
{
	struct fold *f = &e->folds[fi];
	bool ok = true;
	if (f->bad)
		return 0;
	uint32_t j = 0;
	while (j < f->na && f->a[j] != id)
		j++;
	bool at_b = j == f->na;
	if (e->ncaps >= ENG_CAPTURES || f->closed ||
	    (at_b ? e->fold_open != (int32_t)fi
		  : e->fold_open >= 0 && e->fold_open != (int32_t)fi)) {
		f->bad = e->fold_stop = true; /* out of order */
		e->fold_open = -1;
		return 0;
	}
	uint32_t cap = e->ncaps;
	if (fold_counters(e))
		return -1;
	if (!at_b) {
		struct probe_cap *pc = &f->pc[j];
		pc->cap = cap;
		pc->sig = e->nsigbuf;
		if (fold_sign(e, f, id, &ok))
			return -1;
		pc->nsig = e->nsigbuf - pc->sig;
		pc->ok = ok;
		pc->lo = pc->hi = id;
		e->fold_open = (int32_t)fi;
		return 0;
	}
	size_t at = e->nsigbuf;
	if (fold_sign(e, f, f->b, &ok))
		return -1;
	for (j = 0; j < f->na && ok && !f->period; j++) {
		const struct probe_cap *pc = &f->pc[j];
		uint32_t p = j + 1;
		if (pc->cap == UINT32_MAX || !pc->ok || e->nsigbuf - at != pc->nsig ||
		    memcmp(e->sigbuf + at, e->sigbuf + pc->sig, pc->nsig * sizeof *e->sigbuf) ||
		    (int64_t)pc->lo < (int64_t)f->a[j] - f->before ||
		    (int64_t)pc->hi >= (int64_t)f->b + f->after)
			continue;
		if (f->gap % p) {
			f->odd = f->odd ? f->odd : p;
			continue;
		}
		f->period = p;
		f->copies = f->gap / p;
		f->cap[0] = pc->cap;
		f->cap[1] = cap;
	}
	f->bad = !f->period;
	e->nsigbuf = at;
	e->fold_open = -1;
	e->fold_stop = f->bad;
	f->closed = true;
	if (f->period)
		fold_offsets(e, f, fi);
	return 0;
}

/* The tasks started while fold fi is open: each captured probe keeps the range since its own
 * capture. */
static void fold_started(struct eng *e, uint32_t id)
{
	struct fold *f = &e->folds[e->fold_open];
	for (uint32_t j = 0; j < f->na; j++) {
		struct probe_cap *pc = &f->pc[j];
		if (pc->cap == UINT32_MAX)
			continue;
		pc->lo = id < pc->lo ? id : pc->lo;
		pc->hi = id > pc->hi ? id : pc->hi;
	}
}

/* Every fold periodic: the left-out periods added to the run's results (see engine.h). */
static void unfold(struct eng *e)
{
	size_t nr = 2 * (size_t)e->nres, np = CAP_POOL * (size_t)e->npools;
	for (uint32_t i = 0; i < e->nfolds; i++) {
		const struct fold *f = &e->folds[i];
		const struct capture *A = &e->caps[f->cap[0]], *B = &e->caps[f->cap[1]];
		double q = (double)f->copies;
		const double *wa = e->capwork + f->cap[0] * nr, *wb = e->capwork + f->cap[1] * nr;
		uint64_t dt = f->copies * (B->t - A->t);
		double de = q * (B->energy - A->energy);
		e->now += dt;
		e->energy += de;
		e->events += f->copies * (B->events - A->events);
		for (uint32_t r = 0; r < e->nres; r++) {
			e->res[r].work += q * (wb[r] - wa[r]);
			e->res[r].busy_ns += q * (wb[e->nres + r] - wa[e->nres + r]);
		}
		for (uint32_t m = 0; m < e->nmarks; m++) {
			struct eng_snapshot *s = &e->snaps[m];
			if (!s->taken || s->ncap <= f->cap[1])
				continue;
			s->t_ns += dt;
			s->energy_j += de;
			for (uint32_t r = 0; r < e->nres; r++) {
				s->work[r] += q * (wb[r] - wa[r]);
				s->busy_ns[r] += q * (wb[e->nres + r] - wa[e->nres + r]);
			}
		}
	}
	/* pools: the run's intervals between captures, each at the net bytes the copies before it
	 * added; a fold's period also at its last copy's */
	for (uint32_t p = 0; p < e->npools; p++) {
		struct eng_pool *x = &e->pools[p];
		int64_t off[1 + ENG_CATS] = {0}, best = INT64_MIN, best_cat[ENG_CATS] = {0};
		for (uint32_t k = 0; k <= e->ncaps; k++) {
			const int64_t *pv = k < e->ncaps ? e->cappool + k * np + p * CAP_POOL : NULL;
			int64_t pk = pv ? pv[1 + ENG_CATS] : x->seg_peak;
			const int64_t *pc = pv ? pv + 2 + ENG_CATS : x->seg_cat;
			/* the fold whose period holds the interval ending at capture k */
			const struct fold *f = NULL;
			for (uint32_t i = 0; i < e->nfolds && pv; i++)
				if (e->folds[i].cap[0] < k && k <= e->folds[i].cap[1])
					f = &e->folds[i];
			int64_t net[1 + ENG_CATS] = {0};
			if (f) {
				const int64_t *a = e->cappool + f->cap[0] * np + p * CAP_POOL;
				const int64_t *b = e->cappool + f->cap[1] * np + p * CAP_POOL;
				for (int c = 0; c <= ENG_CATS; c++)
					net[c] = (int64_t)f->copies * (b[c] - a[c]);
			}
			int64_t extra = net[0] > 0 ? net[0] : 0;
			if (pk + off[0] + extra > best) {
				best = pk + off[0] + extra;
				for (int c = 0; c < ENG_CATS; c++)
					best_cat[c] = pc[c] + off[1 + c] + (extra ? net[1 + c] : 0);
			}
			if (f && k == f->cap[1])
				for (int c = 0; c <= ENG_CATS; c++)
					off[c] += net[c];
		}
		x->peak = best;
		memcpy(x->peak_cat, best_cat, sizeof best_cat);
		x->cur += off[0];
		for (int c = 0; c < ENG_CATS; c++)
			x->cur_cat[c] += off[1 + c];
	}
}

static int complete(struct eng *e, uint32_t id)
{
	struct eng_task *t = &e->tasks[id];
	t->state = TASK_DONE;
	t->t_end = e->now;
	if (t->neff && apply_effects(e, t, ENG_AT_END))
		return -1;
	for (uint32_t m = 0; m < e->nmarks; m++)
		if ((uint32_t)e->marks[m] == id)
			snapshot(e, (int)m);
	if (t->stream >= 0) {
		struct stream *s = &e->streams[t->stream];
		s->busy = false;
		s->head++;
		if (try_stream(e, t->stream))
			return -1;
	}
	for (uint32_t x = t->succ; x != UINT32_MAX; x = e->edges[x].next) {
		uint32_t to = e->edges[x].to;
		if (--e->tasks[to].ndeps == 0 && ready(e, to))
			return -1;
	}
	return 0;
}

static int activate(struct eng *e, uint32_t id)
{
	struct eng_task *t = &e->tasks[id];
	if (t->work <= 0)
		return complete(e, id);
	if (GROW(e->active, e->nactive, e->capactive))
		return fail(e, "out of memory");
	t->state = TASK_RUN;
	struct flow *f = &e->active[e->nactive++];
	f->task = id;
	f->nres = t->nres;
	f->share = t->share;
	memcpy(f->res, t->res, sizeof f->res);
	memcpy(f->scale, t->scale, sizeof f->scale);
	f->remaining = t->work;
	f->rate = 0;
	f->t_upd = e->now;
	f->mark = 0;
	f->next = -1;
	t->fslot = e->nactive - 1;
	t->fseq = UINT32_MAX; /* no completion queued yet */
	/* its top, then its share of each resource's demand: where none binds it runs at its top
	 * and no other flow's rate changes, so no component needs filling (most flows: each GPU's
	 * compute, its own links, copies through DRAM that has room for all of them) */
	double rate = INFINITY;
	for (int r = 0; r < t->nres; r++) {
		double cap = e->res[t->res[r]].capacity / t->scale[r];
		rate = cap < rate ? cap : rate;
	}
	f->top = rate;
	bool alone = true;
	for (int r = 0; r < t->nres; r++) {
		struct eng_resource *x = &e->res[t->res[r]];
		x->demand += t->scale[r] * rate;
		if (res_add(e, x, id))
			return -1;
		if (binds(x)) {
			alone = false;
			if (seed(e, t->res[r]))
				return -1;
		}
		if (!(t->share >> r & 1) && x->nflows++ == 0)
			res_turn(e, x, true);
	}
	if (alone) {
		f->next = rate;
		if (GROW(e->solo, e->nsolo, e->capsolo))
			return fail(e, "out of memory");
		e->solo[e->nsolo++] = id;
	}
	e->dirty = true;
	return 0;
}

/* A flow's completion event: the rest of its work credited, its slot freed, the task done. */
static int finish_flow(struct eng *e, uint32_t id)
{
	struct eng_task *t = &e->tasks[id];
	struct flow *f = &e->active[t->fslot];
	for (int r = 0; r < f->nres; r++)
		if (!(f->share >> r & 1))
			e->res[f->res[r]].work += f->remaining * f->scale[r];
	for (int r = 0; r < f->nres; r++) {
		struct eng_resource *x = &e->res[f->res[r]];
		bool bound = binds(x);
		res_del(x, id);
		x->demand = x->nfl ? x->demand - f->scale[r] * f->top : 0;
		/* flows left on a resource that bound may speed up; one that did not bind changes
		 * nobody's rate */
		if (bound && x->nfl && seed(e, f->res[r]))
			return -1;
		if (!(f->share >> r & 1) && --x->nflows == 0)
			res_turn(e, x, false);
	}
	uint32_t slot = t->fslot;
	e->active[slot] = e->active[--e->nactive];
	if (slot < e->nactive)
		e->tasks[e->active[slot].task].fslot = slot;
	e->dirty = true;
	return complete(e, id);
}

/* A flow whose rate changed gets a new completion event (the old one goes stale by
 * version). */
static int schedule(struct eng *e, struct flow *f)
{
	if (f->next == f->rate)
		return 0;
	if (f->rate > 0)
		flow_catch_up(e, f);
	else /* a flow that has not started moves nothing until now */
		f->t_upd = e->now;
	f->rate = f->next;
	double ns = f->rate > 0 ? ceil(f->remaining / f->rate * 1e9) : 1e18;
	if (!(ns < 1e18))
		return fail(e, "task %s would run longer than 31 years (%.3g units at %.3g per "
			       "second): reduce --seq or --batch",
			    e->tasks[f->task].name, f->remaining, f->rate);
	struct eng_task *t = &e->tasks[f->task];
	return push(e, e->now + (ns < 1 ? 1 : (uint64_t)ns), EV_FLOW, f->task, &t->fseq);
}

/* After the events of one instant: new rates for the changed components and the flows that
 * started alone, their completions, then the power level. */
static int settle(struct eng *e)
{
	if (!e->dirty)
		return 0;
	e->dirty = false;
	e->ncomp = 0;
	if (e->nseeds && share(e))
		return -1;
	for (uint32_t i = 0; i < e->ncomp; i++)
		if (schedule(e, &e->active[e->comp[i]]))
			return -1;
	for (uint32_t i = 0; i < e->nsolo; i++) {
		const struct eng_task *t = &e->tasks[e->solo[i]];
		if (t->state == TASK_RUN && schedule(e, &e->active[t->fslot]))
			return -1;
	}
	e->nsolo = 0;
	return update_power_dirty(e);
}

int eng_run(struct eng *e, struct eng_stats *st)
{
	e->now = e->seq = e->events = e->t_energy = 0;
	e->energy = 0;
	e->dirty = false;
	e->nheap = e->nactive = e->ntouched = e->npdirty = e->nseeds = e->ncomp = e->nsolo = 0;
	e->nq = e->qhead = 0;
	e->queue_due = 0;

	size_t need = (size_t)ENG_MARKS * 3 * (e->nres ? e->nres : 1);
	if (need > e->snapcap) {
		double *b = realloc(e->snapbuf, need * sizeof *b);
		if (!b)
			return fail(e, "out of memory");
		e->snapbuf = b;
		e->snapcap = need;
	}
	for (int m = 0; m < ENG_MARKS; m++) {
		e->snaps[m] = (struct eng_snapshot){0};
		e->snaps[m].busy_ns = e->snapbuf + (size_t)m * 3 * e->nres;
		e->snaps[m].work = e->snaps[m].busy_ns + e->nres;
		e->snaps[m].queued = e->snaps[m].work + e->nres;
	}
	for (uint32_t r = 0; r < e->nres; r++) {
		e->res[r].busy_ns = e->res[r].work = 0;
		e->res[r].nflows = e->res[r].nfl = e->res[r].seed = e->res[r].mark = 0;
		e->res[r].demand = 0;
	}
	e->gen = 0;
	for (uint32_t i = 0; i < e->ntasks; i++)
		e->tasks[i].fseq = UINT32_MAX;
	e->ncaps = e->npending = 0;
	e->nsigbuf = 0;
	e->fold_open = -1;
	e->fold_next = e->max_started = 0;
	e->fold_failed = 0;
	e->fold_stop = e->pool_stop = false;
	for (uint32_t i = 0; i < e->nfolds; i++) {
		struct fold *f = &e->folds[i];
		f->closed = f->bad = false;
		f->period = f->odd = 0;
		f->copies = 0;
		for (uint32_t j = 0; j < f->na; j++)
			f->pc[j].cap = UINT32_MAX;
	}
	for (uint32_t p = 0; p < e->npools; p++) {
		e->pools[p].cur = e->pools[p].peak = e->pools[p].seg_peak = e->pools[p].off = 0;
		memset(e->pools[p].off_cat, 0, sizeof e->pools[p].off_cat);
		memset(e->pools[p].seg_cat, 0, sizeof e->pools[p].seg_cat);
		memset(e->pools[p].cur_cat, 0, sizeof e->pools[p].cur_cat);
		memset(e->pools[p].peak_cat, 0, sizeof e->pools[p].peak_cat);
		e->pools[p].hist_n = 0;
		if (sample(e, &e->pools[p].hist, &e->pools[p].hist_n, &e->pools[p].hist_cap, 0))
			return -1;
	}
	for (uint32_t n = 0; n < e->nnodes; n++) {
		e->nodes[n].hist_n = 0;
		e->nodes[n].peak = 0;
	}
	if (update_power(e))
		return -1;

	for (uint32_t i = 0; i < e->ntasks; i++)
		if (e->tasks[i].ndeps == 0 && e->tasks[i].stream < 0 && ready(e, i))
			return -1;
	for (uint32_t s = 0; s < e->nstreams; s++)
		if (try_stream(e, (int32_t)s))
			return -1;

	/* Each instant: its heap events (completions, then latencies ending), then the tasks
	 * that became startable, in the order they did (a FIFO: starts happen only at the current
	 * instant, so they need no heap), then new rates. */
	for (;;) {
		if (e->nheap && e->heap[0].t == e->now) {
			struct ev v = pop(e);
			if (stale(e, &v))
				continue; /* superseded by a later rate change: not an event */
			e->events++;
			if (EV_KIND(v) == EV_ACT ? activate(e, EV_TASK(v)) : finish_flow(e, EV_TASK(v)))
				return -1;
			continue;
		}
		if (e->qhead < e->nq) {
			if (e->qhead == 0 && e->nq > 1)
				frees_first(e);
			uint32_t id = e->startq[e->qhead++];
			struct eng_task *t = &e->tasks[id];
			e->events++;
			t->t_start = e->now;
			if (id > e->max_started)
				e->max_started = id;
			if (e->fold_open >= 0)
				fold_started(e, id);
			if (t->probe && e->npending < ENG_CAPTURES)
				e->pending[e->npending++] = id; /* each probe starts once */
			if (t->neff && apply_effects(e, t, ENG_AT_START))
				return -1;
			if (t->latency_ns) {
				t->state = TASK_LATENT;
				if (push(e, e->now + t->latency_ns, EV_ACT, id, NULL))
					return -1;
			} else if (activate(e, id)) {
				return -1;
			}
			continue;
		}
		e->qhead = e->nq = 0;
		if (settle(e))
			return -1;
		for (uint32_t i = 0; i < e->npending; i++)
			if (fold_capture(e, e->tasks[e->pending[i]].probe - 1u, e->pending[i]))
				return -1;
		e->npending = 0;
		for (uint32_t m = 0; e->queue_due && m < e->nmarks; m++)
			if (e->queue_due >> m & 1)
				snapshot_queues(e, (int)m);
		e->queue_due = 0;
		if (e->fold_stop || e->pool_stop)
			break; /* the run stands for nothing now: the caller runs again, or reads
				* only the stop */
		/* completions a later rate change superseded are not events: dropped here, a
		 * stale one left last would move the clock past the end of the run */
		while (e->nheap && stale(e, &e->heap[0]))
			pop(e);
		if (!e->nheap)
			break;
		e->now = e->heap[0].t;
	}
	accrue_energy(e);
	for (uint32_t i = 0; i < e->nfolds; i++)
		if (e->folds[i].bad || (!e->fold_stop && !e->pool_stop && !e->folds[i].closed))
			e->fold_failed |= 1ull << i;
	if (e->pool_stop) /* the whole graph's levels at the stop */
		for (uint32_t p = 0; p < e->npools; p++) {
			struct eng_pool *x = &e->pools[p];
			x->cur += x->off;
			for (int c = 0; c < ENG_CATS; c++)
				x->cur_cat[c] += x->off_cat[c];
			if (x->cur > x->peak) {
				x->peak = x->cur;
				memcpy(x->peak_cat, x->cur_cat, sizeof x->peak_cat);
			}
		}
	for (uint32_t i = 0; i < e->ntasks && !e->fold_stop && !e->pool_stop; i++)
		if (e->tasks[i].state != TASK_DONE)
			return fail(e, "deadlock: task %u (%s) never ran", i,
				    e->tasks[i].name ? e->tasks[i].name : "?");
	if (e->nfolds && !e->fold_failed && !e->pool_stop)
		unfold(e);

	if (st) {
		st->events = e->events;
		st->tasks = e->ntasks;
		st->end_ns = e->now;
		st->energy_j = e->energy;
		st->peak_power_w = 0;
		for (uint32_t n = 0; n < e->nnodes; n++)
			st->peak_power_w = fmax(st->peak_power_w, e->nodes[n].peak);
	}
	return 0;
}

int eng_ntasks(const struct eng *e)
{
	return (int)e->ntasks;
}
const struct eng_task *eng_task_at(const struct eng *e, int id)
{
	return &e->tasks[id];
}
int eng_nresources(const struct eng *e)
{
	return (int)e->nres;
}
const struct eng_resource *eng_resource_at(const struct eng *e, int id)
{
	return &e->res[id];
}
int eng_npools(const struct eng *e)
{
	return (int)e->npools;
}
const struct eng_pool *eng_pool_at(const struct eng *e, int id)
{
	return &e->pools[id];
}
int eng_nstreams(const struct eng *e)
{
	return (int)e->nstreams;
}
const char *eng_stream_name(const struct eng *e, int id)
{
	return e->streams[id].name;
}
int eng_nnodes(const struct eng *e)
{
	return (int)e->nnodes;
}
const char *eng_node_name(const struct eng *e, int n)
{
	return e->nodes[n].name;
}
const struct eng_sample *eng_power_history(const struct eng *e, int n, uint32_t *count)
{
	*count = e->nodes[n].hist_n;
	return e->nodes[n].hist;
}
const struct eng_snapshot *eng_snapshot_at(const struct eng *e, int mark)
{
	return mark >= 0 && (uint32_t)mark < e->nmarks ? &e->snaps[mark] : NULL;
}
