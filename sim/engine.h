/*
 * engine — a discrete-event engine that runs a task graph on rate-limited resources.
 *
 * What it models. Resources have a capacity in units per second (FLOP/s for a GPU's tensor
 * cores, bytes/s for a PCIe direction, DRAM, an NVMe array, NVLink, params/s for CPU AdamW).
 * A task puts `work` units on a path of up to ENG_PATH resources (a host-to-GPU copy loads DRAM
 * and the PCIe link; CPU AdamW loads the cores and DRAM), each with its own scale (units of that
 * resource per unit of work). Concurrent tasks share every resource max-min fairly (progressive
 * filling, weighted by the scales): a task runs at the largest rate no bottleneck on its path
 * denies it, and rates are recomputed whenever a task starts or ends. A task takes latency +
 * work / rate, at the rates it is given over time. A path entry may be a share of capacity only
 * (eng_task_share): it competes for the resource without making it busy.
 * Streams are in-order queues (a CUDA stream, a CPU thread pool): a task on a stream starts when
 * its dependencies are done and every task submitted to the stream before it has finished.
 * Memory pools (GPU HBM, host DRAM, flash) have a capacity and a history: a task's effects add or
 * release bytes when it starts or ends; the pool records every change, its peak and the largest
 * overshoot of its capacity (the engine never blocks on memory: the policy decides placement,
 * the engine reports what it costs). Power devices draw their idle watts, or the watts of the
 * first of their states whose resource is busy; the engine integrates power per node over time.
 *
 * Invariants. Time is integer nanoseconds. Events are ordered by (time, priority, sequence):
 * completions before starts at the same instant, FIFO among ties, so identical inputs give
 * identical outputs. A task's rate is > 0 while it runs; every byte a task adds is counted in
 * its pool's history; the work integrated on a resource equals the work of the tasks that
 * crossed it (scaled; capacity shares excluded).
 *
 * Failure. Builders return -1 (and the engine keeps an error message) on a bad id, a zero or
 * negative capacity, or allocation failure; eng_run() returns -1 when the graph deadlocks (a
 * cycle, or a stream whose head waits on a later task of the same stream) naming the task.
 */
#ifndef TIERPLAN_ENGINE_H
#define TIERPLAN_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ENG_PATH 4
#define ENG_NAME 48

enum { ENG_AT_START = 0, ENG_AT_END = 1 };
#define ENG_CATS 5 /* caller's categories of pool bytes (weights, gradients, ...) */

struct eng_resource {
	char name[ENG_NAME];
	double capacity;  /* units per second */
	const char *unit; /* "B" or "FLOP" or "param": for reports */
	double busy_ns;   /* time with at least one task on it */
	double work;      /* units delivered (integrated rate x time) */
	double level;     /* scratch: remaining capacity while filling */
	double weight;    /* scratch: sum of unfixed flows' scales */
	uint32_t nflows;  /* active tasks that make it busy (not its capacity shares) */
	uint32_t unfixed; /* scratch: active tasks whose rate is not yet fixed */
	uint32_t mark;    /* scratch: recompute generation */
	int32_t dev;      /* the power device with a state on it, -1 none, -2 several */
	uint64_t busy_since; /* when it last turned busy */
	uint32_t *fl, nfl, capfl; /* engine-internal: the running tasks on it */
	uint32_t seed;    /* engine-internal: its flows changed since the last sharing */
	double demand;    /* engine-internal: its running flows' tops x scales (see binds()) */
};

struct eng_pool {
	char name[ENG_NAME];
	double capacity; /* bytes */
	double scale;    /* identical copies it stands for (symmetric GPUs); reported bytes x scale */
	int64_t cur, peak; /* bytes, unscaled */
	uint64_t peak_ns;
	int64_t cur_cat[ENG_CATS], peak_cat[ENG_CATS]; /* by category; peak_cat at the peak */
	int64_t seg_peak, seg_cat[ENG_CATS]; /* engine-internal: the peak since the last fold
					      * capture, and its categories */
	int64_t stop; /* the run stops once the level passes it (eng_pool_stop); 0 never */
	int64_t off, off_cat[ENG_CATS]; /* engine-internal: what the left-out periods of the folds
					 * found periodic so far add to the levels after them */
	uint32_t hist_n, hist_cap;
	struct eng_sample *hist; /* (t, bytes) after each change, unscaled; at most two an instant:
				  * the highest level it reached, then its last */
};

struct eng_sample {
	uint64_t t_ns;
	double value;
};

struct eng_task {
	/* what the events read, first and together */
	uint8_t nres, state;
	uint8_t share;      /* bit r: path entry r takes capacity only (eng_task_share) */
	uint8_t probe;      /* engine-internal: 1 + the fold whose probe it is, 0 none */
	uint32_t ndeps;     /* dependencies not yet done */
	int32_t stream;     /* -1: starts as soon as its dependencies are done */
	uint32_t succ;      /* head of the successor edge list, or UINT32_MAX */
	uint32_t eff, neff; /* memory effects: [eff, eff + neff) */
	uint32_t fslot, fseq; /* engine-internal: its running flow and the sequence number of
			       * that flow's current completion event */
	int16_t res[ENG_PATH];
	float scale[ENG_PATH];
	double work;        /* units on the path (scaled per resource) */
	uint64_t latency_ns;
	const char *name; /* not copied: a string literal or one the caller keeps alive */
	uint64_t t_start, t_end;
};

struct eng_stats {
	uint64_t events, tasks, end_ns; /* with the folds' left-out periods (eng_fold) */
	double energy_j;      /* all nodes, joules */
	double peak_power_w;  /* largest per-node total (all nodes are identical when symmetric) */
};

struct eng;

struct eng *eng_new(void);
void eng_free(struct eng *e);
/* Forgets the graph, resources and pools, keeping the allocations for reuse. */
void eng_reset(struct eng *e);
/* A buffer of at least `bytes` bytes the engine keeps for its graph's builder from one build to
 * the next, so that a worker builds configuration after configuration without allocating. Its
 * contents are the caller's (not zeroed; eng_reset leaves them); it stays valid until the next
 * call or eng_free. NULL when it cannot grow. */
void *eng_scratch(struct eng *e, size_t bytes);
/* Whether pools and power nodes record every change (default) or only their peaks: a search
 * that reads peaks alone saves the histories' cost. */
void eng_keep_history(struct eng *e, bool keep);
const char *eng_error(const struct eng *e);

int eng_resource(struct eng *e, const char *name, double capacity, const char *unit);
int eng_pool(struct eng *e, const char *name, double capacity, double scale);
/* Stops the run as soon as the pool's level (unscaled bytes) passes `level`, for a caller to
 * whom a run past it is of no use (a search that reads only whether an option fits). In a
 * folded run (eng_fold) the level compared is the whole graph's: what the run built plus what
 * the left-out periods of the folds found periodic add after them; from the first start of a
 * task past a fold's last a probe until that fold is found periodic, the left-out part is not
 * known yet and nothing stops. A stopped run's levels and peaks are the whole graph's at the
 * stop (a lower bound of its peak). 0 ok, -1 bad pool or level. */
int eng_pool_stop(struct eng *e, int pool, int64_t level);
/* After eng_run: whether a pool's stop ended the run (its results stand for nothing but that
 * the pool passed its stop level). */
bool eng_pool_stopped(const struct eng *e);
int eng_stream(struct eng *e, const char *name);
/* A power node: its constant draw (node base, DRAM) and how many identical nodes it stands for. */
int eng_node(struct eng *e, const char *name, double base_watts, double copies);
/* A device on a node drawing idle watts, times `copies` identical devices. */
int eng_device(struct eng *e, int node, const char *name, double idle_watts, double copies);
/* Device state: while `res` is busy the device draws `watts` (first busy state in add order). */
int eng_device_state(struct eng *e, int dev, int res, double watts);

/* Adds a task; returns its id. Path resources and scales; work 0 = a pure delay of latency. */
int eng_task(struct eng *e, const char *name, int stream, double work, uint64_t latency_ns,
	     int nres, const int *res, const float *scale);
/* Adds `res` to a task's path as a share of its capacity only: while the task runs it takes
 * rate x scale of the resource in the max-min sharing, as any path entry does, but the
 * resource does not turn busy for it (utilisation, device power) and is not credited its work.
 * What it models: a kernel occupying part of another engine's units, as a collective's CTAs
 * hold SMs beside the compute. 0 ok, -1 for a full path, a resource already on it, or a bad
 * id or scale. */
int eng_task_share(struct eng *e, int task, int res, float scale);
int eng_dep(struct eng *e, int before, int after);
/* Adds (bytes > 0) or releases (bytes < 0) pool bytes of a category (0..ENG_CATS-1) when the
 * task starts or ends. */
int eng_effect(struct eng *e, int task, int pool, int cat, int64_t bytes, int when);

int eng_run(struct eng *e, struct eng_stats *st);

/* Accessors valid after eng_run (and until the next reset). */
int eng_ntasks(const struct eng *e);
const struct eng_task *eng_task_at(const struct eng *e, int id);
int eng_nresources(const struct eng *e);
const struct eng_resource *eng_resource_at(const struct eng *e, int id);
int eng_npools(const struct eng *e);
const struct eng_pool *eng_pool_at(const struct eng *e, int id);
int eng_nstreams(const struct eng *e);
const char *eng_stream_name(const struct eng *e, int id);
/* Power of node n over time: samples after each change (watts of one node). */
int eng_nnodes(const struct eng *e);
const char *eng_node_name(const struct eng *e, int n);
const struct eng_sample *eng_power_history(const struct eng *e, int n, uint32_t *count);

/*
 * Marks: when a marked task ends, the engine snapshots its counters (time, energy, each
 * resource's busy time and work), and at the end of that instant each resource's queue (the
 * work left of the tasks running on it and of those whose dependencies are done that wait only
 * for their stream's turn). Two marks one period apart let a caller extrapolate a periodic
 * steady state (identical micro-batches) without simulating every repetition, and the queues
 * tell it whether the state is steady: a queue longer at the second mark is a backlog the
 * repetitions would grow.
 */
#define ENG_MARKS 4
struct eng_snapshot {
	uint64_t t_ns;
	double energy_j;
	double *busy_ns, *work; /* per resource, valid after eng_run */
	double *queued; /* per resource: the work left of the tasks running and of those that
			 * wait only for their stream's turn (a backlog where it grows) */
	bool taken;
	uint32_t ncap; /* engine-internal: fold captures before it */
};
/* Marks a task; returns the mark index (0..ENG_MARKS-1) or -1. */
int eng_mark(struct eng *e, int task);
const struct eng_snapshot *eng_snapshot_at(const struct eng *e, int mark);

/*
 * Folds: a run that stands for a longer graph whose middle repeats (identical layers), exactly.
 *
 * The caller builds a pass with `gap` units of its middle left out (a unit: a block of layers,
 * whose tasks repeat) and names probes in what it built: b, a task of the first unit after the
 * gap, and a[0..na-1], the same task j + 1 units before it (a[0] in the last unit before the
 * gap; b - a[j] tasks apart, the same tasks in between as after b). The engine captures its
 * state at the end of the instant each probe starts. The pass is periodic with period p units
 * when a[p - 1]'s capture and b's agree once b's is shifted back by b - a[p - 1] ids and by the
 * time between them: every running flow (in order: its remaining work, rate and last update),
 * every pending event (in order), each resource's running tasks and demand, each stream's head,
 * and the state and unmet dependencies of every task in [a - before, a + after) — with every
 * live task, and every task started between the probes, inside those windows. Memory pools do
 * not steer the engine, so their levels are not compared. The run folds at the smallest p that
 * agrees and divides gap: a deterministic engine in a periodic state runs each left-out
 * repetition as it ran the one between the probes, so eng_run adds copies = gap / p of that
 * period: to the time, energy and events, each resource's work and busy time, the snapshots of
 * marks reached after b, and the pools (levels after b move by the period's net bytes times
 * copies; the peak of copy c is the period's peak plus c times its net bytes). A pass can
 * settle into a cycle of several units (reads and writes sharing drives take turns), which is
 * why there are several a probes.
 *
 * Folds must be captured in order (a1 < b1 <= a2 < b2 ...). Where a fold is not periodic the
 * run stops (its results stand for nothing) and eng_fold_failed names it, eng_fold_period says
 * which period agreed but did not divide the gap: the caller builds that pass again (with a gap
 * the period divides, more units before it, or whole) and runs again. Task times
 * (eng_task_at), histories and a pool's peak_ns are those of the run as built: a caller that
 * reads them folds nothing.
 *
 * What the comparison cannot see is the caller's part: the graph left out must be copies of
 * the unit between the probes, and each probe's window must reach every task that can run beside
 * it, with the graph built alike that far on both sides of the gap (step.c, fold_edge).
 */
#define ENG_FOLDS 32
#define ENG_FOLD_PROBES 12 /* a probes of a fold at most: the longest period it can find */
/* Registers a fold; returns its index, or -1 (bad task, probes out of order, too many). */
int eng_fold(struct eng *e, const int *a, uint32_t na, int b, uint32_t before, uint32_t after,
	     uint64_t gap);
/* After eng_run: bit i set when fold i was not periodic (the run stopped there). */
uint64_t eng_fold_failed(const struct eng *e);
/* After eng_run, for a fold that failed: the smallest period (units) at which its pass agreed
 * but which does not divide its gap; 0 none. */
uint32_t eng_fold_period(const struct eng *e, int fold);
/* Whether pools and nodes keep histories (eng_keep_history). */
bool eng_keeps_history(const struct eng *e);

#endif
