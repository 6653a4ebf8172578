/*
 * cmd_sweep — `tierplan sweep --grid FILE`: many exact configurations through the simulator.
 *
 * The grid file is JSON: "base" holds simulate flags (without "--") every point shares, "grid"
 * holds the flags that vary, each a list of values; the points are the Cartesian product, the
 * last key varying fastest. Each point runs as `tierplan simulate` would, on all cores (one
 * engine per thread; the rows pass through a ring of 256 per thread, so memory stays bounded),
 * and becomes one output row in point order: CSV (a header, then a row per point) or JSON
 * lines. A point that is invalid (a layout a policy cannot run, a bad value) gets a row with
 * its error; the sweep goes on. --unfit skip stops a point where a GPU overflows
 * (sim_option.stopped): its row has the overflow and no time, peaks or cost; the rows of
 * points that fit are those the whole simulation gives.
 * --shard I/N takes the I-th of N contiguous slices of the points, and only shard 1 prints the
 * CSV header, so the shards' outputs concatenated in order are the whole sweep's (Slurm job
 * arrays). Progress goes to stderr when stderr is a terminal.
 * Points whose flags resolve to the inputs of one of the last points simulated take its row
 * without running (struct memo), which the progress line counts.
 * Rows are rendered in memory and written whole; --out FILE goes through a temporary renamed at
 * the end, so an interrupted sweep leaves the old file (or none), never half a table.
 * Failure: exit 3 for a bad grid (naming the key; an unknown or missing flag is caught before
 * any point runs) and when every point failed, 4 for a system error (including points that ran
 * out of memory).
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../reports/report.h"
#include "../model/catalog.h"
#include "cli.h"
#include "../sim/engine.h"
#include "../model/file.h"
#include "../sim/opts.h"
#include "../sim/grid.h"
#include "../sim/plan.h"

#define CHUNK 256
/* Points remembered by the memo (below): flags that resolve alike repeat a configuration a few
 * points apart (the last key varies fastest) [U: a bound on memory, about 6 kB a point] */
#define MEMO 64
#define MAX_SHARDS 1000000 /* Slurm caps job arrays far below this (MaxArraySize) */

struct row {
	int rc;
	char err[512];
	struct sim_option o;
};

/* The points of a sweep and the ring their rows pass through: the threads take points in
 * order and fill row i % nring of point first + i once the writer has taken the row nring
 * before it; the writer (the command's thread) takes the rows in point order as they are done
 * and runs points itself while the row it needs next is not. So no thread idles while a
 * point is left, and memory stays at nring rows. */
struct job {
	const struct tp_grid *g;
	bool skip_unfit; /* --unfit skip */
	uint64_t first, count;
	struct row *rows;
	unsigned char *done; /* per ring slot: its row is filled */
	size_t nring;
	pthread_mutex_t mu;          /* guards what follows */
	pthread_cond_t filled, free; /* a row is done; a slot is free (or the sweep stops) */
	uint64_t next;               /* the next point to take */
	uint64_t taken;              /* rows the writer has taken: it waits for row `taken` */
	uint32_t waiting;            /* workers waiting for a free slot */
	bool stop;                   /* the writer gave up (it could not write) */
	struct memo *memo;           /* NULL: none (out of memory) */
};

/*
 * Points whose flags resolve to the same inputs run once. Some of a grid's flags resolve alike
 * at some of its points (sequence-parallel auto and no at tp 1: both none), so the same
 * configuration comes up more than once. The memo keeps the inputs of the last MEMO points
 * simulated, byte for byte (tp_resolve_argv zeroes them whole, padding included), with their
 * results: the simulation reads nothing else and is deterministic, so a point whose inputs
 * equal one of them has its row without running. Inputs that differ only where the simulation
 * does not look miss it, which costs a run.
 */
struct memo_key {
	struct sim_workload w;
	struct mdl_hw hw;
	struct sim_econ ec;
	struct sim_config c;
};

struct memo {
	pthread_mutex_t mu;
	unsigned next; /* the entry the next point replaces */
	uint64_t hits;
	struct memo_entry {
		bool used;
		uint64_t hash;
		struct memo_key k;
		struct row r;
	} e[MEMO];
};

/* FNV-1a over the key's 8-byte words (the key is a whole number of them: its structs hold
 * 8-byte fields), a word at a time: a byte at a time it took 3 % of a sweep of the 530B grid,
 * its multiplies a chain as long as the key's ~5 kB. */
static uint64_t memo_hash(const struct memo_key *k)
{
	_Static_assert(sizeof(struct memo_key) % sizeof(uint64_t) == 0, "memo_key in words");
	const unsigned char *b = (const unsigned char *)k;
	uint64_t h = 1469598103934665603ull, w;
	for (size_t i = 0; i < sizeof *k; i += sizeof w) {
		memcpy(&w, b + i, sizeof w);
		h = (h ^ w) * 1099511628211ull;
	}
	return h;
}

/* A remembered point with inputs k into *r: true, else false. */
static bool memo_get(struct memo *m, const struct memo_key *k, uint64_t h, struct row *r)
{
	bool hit = false;
	pthread_mutex_lock(&m->mu);
	for (int i = 0; i < MEMO && !hit; i++)
		if (m->e[i].used && m->e[i].hash == h && !memcmp(&m->e[i].k, k, sizeof *k)) {
			*r = m->e[i].r;
			m->hits++;
			hit = true;
		}
	pthread_mutex_unlock(&m->mu);
	return hit;
}

static void memo_put(struct memo *m, const struct memo_key *k, uint64_t h, const struct row *r)
{
	pthread_mutex_lock(&m->mu);
	struct memo_entry *x = &m->e[m->next++ % MEMO];
	x->used = true;
	x->hash = h;
	x->k = *k;
	x->r = *r;
	pthread_mutex_unlock(&m->mu);
}

static void help(FILE *fp)
{
	fprintf(fp,
		"usage: tierplan sweep --grid FILE [--format csv|jsonl] [--out FILE] [--shard I/N]\n"
		"                      [--threads N] [--unfit time|skip]\n\n"
		"Runs every point of a grid of simulate flags through the simulator, one row per\n"
		"point. FILE: {\"base\": {\"model\": \"70b\", \"seq\": 4096}, \"grid\": {\"gpus\": [1, 2, "
		"4, 8],\n\"policy\": [\"gpu\", \"tiered\"]}}; the last key varies fastest. A point\n"
		"that cannot run gets a row with its error; a value that cannot run on its own (a\n"
		"model file that is not there, an unknown GPU, a count out of range) is refused\n"
		"first, naming its key. A relative path is read beside FILE.\n\n"
		"options:\n"
		"  --grid FILE        the grid (required)\n"
		"  --format F         csv (default) or jsonl (one JSON object per line)\n"
		"  --out FILE         write the rows to FILE, whole or not at all (default: stdout)\n"
		"  --shard I/N        the I-th of N contiguous slices of the points (1-based)\n"
		"  --threads N        worker threads (default: the online CPUs)\n"
		"  --unfit time|skip  a point that does not fit: time simulates its whole step\n"
		"                     (its row has the time it would take; the default); skip\n"
		"                     stops it where a GPU overflows (its row says so, with no\n"
		"                     time, peaks or cost; the rows of points that fit are the\n"
		"                     same, and a grid of mostly unfit points runs ~2x as fast)\n");
}

/* Point p as `simulate` runs its flags (tp_simulate_argv), or as the memo remembers it; k is
 * the worker's own key buffer, which its points resolve into one after another. */
static void run_point(const struct job *j, uint64_t p, struct eng *e, struct memo_key *k,
		      struct row *r)
{
	char *argv[TP_GRID_ARGV], flags[2 * TP_GRID_KEYS][48];
	int argc = tp_grid_argv(j->g, p, argv, flags);
	if (!j->memo) {
		r->rc = tp_simulate_argv(argc, argv, e, j->skip_unfit, &r->o, NULL, NULL, r->err,
					 sizeof r->err);
		return;
	}
	memset(&r->o, 0, sizeof r->o);
	r->rc = tp_resolve_argv(argc, argv, &k->w, &k->hw, &k->ec, &k->c, r->err, sizeof r->err);
	if (!r->rc) {
		k->c.stop_unfit = j->skip_unfit;
		uint64_t h = memo_hash(k);
		if (!memo_get(j->memo, k, h, r)) {
			if (sim_run(e, &k->w, &k->hw, &k->ec, &k->c, &r->o, r->err, sizeof r->err))
				r->rc = EXIT_INVALID;
			memo_put(j->memo, k, h, r);
		}
	}
}

/* Whether a point is left to take and the ring has a slot for it (j->mu held). */
static bool room(const struct job *j)
{
	return j->next < j->count && j->next < j->taken + j->nring;
}

/* Point i's row is filled (j->mu held): wakes the writer when it is the row it waits for. */
static void mark_filled(struct job *j, uint64_t i)
{
	j->done[i % j->nring] = 1;
	if (i == j->taken)
		pthread_cond_signal(&j->filled);
}

/* Point i of the job into its ring slot, on engine e (NULL: out of memory) with key buffer k. */
static void fill(struct job *j, uint64_t i, struct eng *e, struct memo_key *k)
{
	struct row *r = &j->rows[i % j->nring];
	if (!e) {
		r->rc = EXIT_SYSTEM;
		snprintf(r->err, sizeof r->err, "out of memory");
		return;
	}
	run_point(j, j->first + i, e, k, r);
}

static void *worker(void *arg)
{
	struct job *j = arg;
	struct eng *e = eng_new();
	struct memo_key key = {0}; /* the memo's, for this worker's points (run_point) */
	if (e)
		eng_keep_history(e, false); /* rows report peaks only */
	for (;;) {
		pthread_mutex_lock(&j->mu);
		while (!j->stop && j->next < j->count && !room(j)) {
			j->waiting++;
			pthread_cond_wait(&j->free, &j->mu);
			j->waiting--;
		}
		if (j->stop || j->next >= j->count) {
			pthread_mutex_unlock(&j->mu);
			break;
		}
		uint64_t i = j->next++;
		pthread_mutex_unlock(&j->mu);
		fill(j, i, e, &key);
		pthread_mutex_lock(&j->mu);
		mark_filled(j, i);
		pthread_mutex_unlock(&j->mu);
	}
	eng_free(e);
	return NULL;
}

static void emit_csv(FILE *fp, const struct tp_grid *g, uint64_t p, const struct row *r)
{
	int idx[TP_GRID_KEYS];
	tp_grid_coords(g, p, idx);
	fprintf(fp, "%llu", (unsigned long long)p);
	for (int i = 0; i < g->naxes; i++) {
		fputc(',', fp);
		rpt_csv_field(fp, g->ax[i].vals[idx[i]]);
	}
	fputc(',', fp);
	rpt_sim_csv_row(fp, r->rc ? NULL : &r->o, r->err);
	fputc('\n', fp);
}

/* key: v, or null where it is not known */
static void num(cJSON *j, const char *key, bool known, double v)
{
	if (known)
		cJSON_AddNumberToObject(j, key, v);
	else
		cJSON_AddNullToObject(j, key);
}

static void emit_jsonl(FILE *fp, const struct tp_grid *g, uint64_t p, const struct row *r)
{
	int idx[TP_GRID_KEYS];
	const struct sim_option *o = &r->o;
	cJSON *j = cJSON_CreateObject(), *pt = cJSON_AddObjectToObject(j, "point");
	tp_grid_coords(g, p, idx);
	cJSON_AddNumberToObject(j, "index", (double)p);
	for (int i = 0; i < g->naxes; i++) { /* as the grid gave it: numbers stay numbers */
		const cJSON *v = cJSON_GetArrayItem(g->ax[i].list, idx[i]);
		if (cJSON_IsNumber(v))
			cJSON_AddNumberToObject(pt, g->ax[i].key, v->valuedouble);
		else
			cJSON_AddStringToObject(pt, g->ax[i].key, g->ax[i].vals[idx[i]]);
	}
	if (r->rc) {
		cJSON_AddStringToObject(j, "error", r->err);
	} else {
		cJSON_AddBoolToObject(j, "fits", o->fits);
		cJSON_AddStringToObject(j, "policy", o->policy);
		cJSON_AddNumberToObject(j, "gpus", o->gpus);
		cJSON_AddNumberToObject(j, "tp", o->layout.tp);
		cJSON_AddNumberToObject(j, "pp", o->layout.pp);
		cJSON_AddNumberToObject(j, "interleave", mdl_layout_vp(&o->layout));
		cJSON_AddNumberToObject(j, "ep", mdl_layout_ep(&o->layout));
		cJSON_AddNumberToObject(j, "expert_tp", mdl_layout_etp(&o->layout));
		cJSON_AddNumberToObject(j, "cp", mdl_layout_cp(&o->layout));
		cJSON_AddNumberToObject(j, "dp", o->layout.dp);
		cJSON_AddNumberToObject(j, "zero", o->layout.zero);
		cJSON_AddNumberToObject(j, "micro_batch", (double)o->micro_batch);
		cJSON_AddNumberToObject(j, "grad_accum", (double)o->grad_accum);
		cJSON_AddStringToObject(j, "recompute", mdl_recompute_name(o->recompute));
		cJSON_AddNumberToObject(j, "recompute_layers", o->recompute_layers);
		/* --unfit skip: what a whole step would give is not known (null) */
		bool k = !o->stopped;
		cJSON *pk;
		num(j, "step_seconds", k, o->step_seconds);
		num(j, "tokens_per_second", k, o->tokens_per_second);
		num(j, "model_tflops_per_gpu", k, o->model_tflops_per_gpu);
		pk = cJSON_AddObjectToObject(j, "peak_bytes");
		num(pk, "gpu", k, o->peak_gpu);
		num(pk, "gpu_reserved", k, o->peak_gpu_reserved);
		num(pk, "gpu_allocated", k, o->peak_gpu_allocated);
		/* as simulate's JSON: a GPU-only placement has no host tiers (null) */
		num(pk, "dram", k && rpt_shows_dram(o), o->peak_dram);
		num(pk, "flash", k && rpt_shows_dram(o), o->peak_flash);
		num(j, "peak_power_watts", k, o->peak_power_watts);
		num(j, "energy_joules_per_step", k, o->energy_joules_per_step);
		num(j, "flash_bytes_written_per_step", k, o->flash_bytes_written_per_step);
		num(j, "runtime_seconds", k, o->runtime_seconds);
		num(j, "cost_total_usd", k, o->cost_total);
		num(j, "cost_cloud_usd", k, o->cost_cloud);
		if (k)
			rpt_add_ranges(j, o);
		else
			cJSON_AddNullToObject(j, "ranges");
		if (!o->fits)
			cJSON_AddStringToObject(j, "overflow", o->overflow);
	}
	char *s = cJSON_PrintUnformatted(j);
	if (s)
		fprintf(fp, "%s\n", s);
	free(s);
	cJSON_Delete(j);
}

/* The temporary of --out FILE, removed if a signal ends the sweep (the target stays whole). */
static char sig_tmp[4096];

static void on_signal(int sig)
{
	if (sig_tmp[0])
		unlink(sig_tmp);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Writes a row whole: rendered in memory first, then handed to the kernel in one write where it
 * fits (an interrupted sweep leaves whole rows). 0 ok, -1 with errno. */
static int write_row(int fd, FILE *mem, char **buf, size_t *len)
{
	if (fflush(mem) != 0)
		return -1;
	for (size_t done = 0; done < *len;) {
		ssize_t k = write(fd, *buf + done, *len - done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		done += (size_t)k;
	}
	rewind(mem);
	return 0;
}

int cmd_sweep(int argc, char **argv)
{
	const char *gridpath = NULL, *format = "csv", *outpath = "-", *unfit = "time";
	long shard = 1, nshards = 1, threads = sysconf(_SC_NPROCESSORS_ONLN);
	enum { GRID, FORMAT, OUT, SHARD, UNFIT, THREADS, NOPTS };
	static const char *const known[NOPTS + 1] = {
		[GRID] = "--grid", [FORMAT] = "--format", [OUT] = "--out", [SHARD] = "--shard",
		[UNFIT] = "--unfit", [THREADS] = "--threads"};
	struct tp_grid g;
	char err[1024]; /* room for the model types an error lists */
	int rc = EXIT_OK;

	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			help(stdout);
			return EXIT_OK;
		}
		int k = cli_option(a, known);
		if (k < 0 || i + 1 >= argc)
			return cli_bad_arg("sweep", a, known, "--grid");
		const char *v = argv[++i];
		char *end;
		switch (k) {
		case GRID:
			gridpath = v;
			break;
		case FORMAT:
			format = v;
			break;
		case OUT:
			outpath = v;
			break;
		case SHARD:
			errno = 0;
			shard = strtol(v, &end, 10);
			if (*end != '/' || (nshards = strtol(end + 1, &end, 10)) < 1 || *end ||
			    errno || shard < 1 || shard > nshards || nshards > MAX_SHARDS)
				return cli_fail(EXIT_INVALID, "sweep",
						"--shard: expected I/N with 1 <= I <= N <= 1000000, "
						"e.g. 2/8");
			break;
		case UNFIT:
			unfit = v;
			break;
		case THREADS:
			threads = strtol(v, &end, 10);
			if (*end || threads < 1 || threads > 1024) {
				snprintf(err, sizeof err,
					 "--threads: '%.32s' is not a thread count "
					 "(allowed 1 to 1024)",
					 v);
				return cli_fail(EXIT_INVALID, "sweep", err);
			}
			break;
		}
	}
	if (!gridpath)
		return cli_fail(EXIT_USAGE, "sweep", "--grid FILE is required");
	if (strcmp(format, "csv") && strcmp(format, "jsonl"))
		return cli_fail(EXIT_INVALID, "sweep", "--format: unknown format (allowed: csv, jsonl)");
	if (strcmp(unfit, "time") && strcmp(unfit, "skip")) {
		snprintf(err, sizeof err, "--unfit: unknown '%.32s' (allowed: time, skip)", unfit);
		return cli_fail(EXIT_INVALID, "sweep", err);
	}
	if (tp_grid_load(gridpath, &g, err, sizeof err) || tp_grid_check(&g, gridpath, err, sizeof err)) {
		tp_grid_free(&g);
		return cli_fail(EXIT_INVALID, "sweep", err);
	}
	struct cfg_out out;
	int orc = cfg_out_open(&out, outpath, "--out", err, sizeof err);
	if (orc) {
		tp_grid_free(&g);
		return cli_fail(cli_out_code(orc), "sweep", err);
	}
	if (out.tmp[0]) {
		snprintf(sig_tmp, sizeof sig_tmp, "%s", out.tmp);
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
	}
	char *rowbuf = NULL;
	size_t rowlen = 0;
	FILE *mem = open_memstream(&rowbuf, &rowlen);
	int fd = fileno(out.fp);
	uint64_t failed = 0, oom = 0;
	char first_err[512] = "";
	fflush(out.fp);

	uint64_t per = g.points / (uint64_t)nshards, extra = g.points % (uint64_t)nshards;
	uint64_t first = (uint64_t)(shard - 1) * per + ((uint64_t)(shard - 1) < extra
								 ? (uint64_t)(shard - 1)
								 : extra);
	uint64_t count = per + ((uint64_t)(shard - 1) < extra ? 1 : 0);
	bool csv = !strcmp(format, "csv"), tty = isatty(2);
	struct job j = {.g = &g, .skip_unfit = !strcmp(unfit, "skip"), .first = first,
			.count = count, .nring = (size_t)CHUNK * (size_t)threads};
	j.rows = calloc(j.nring, sizeof *j.rows);
	j.done = calloc(j.nring, 1);
	j.memo = calloc(1, sizeof *j.memo); /* none: every point runs */
	if (j.memo)
		pthread_mutex_init(&j.memo->mu, NULL);
	pthread_t *tid = calloc((size_t)threads, sizeof *tid);
	long started = 0;
	struct eng *own = NULL; /* the writer's engine */
	struct memo_key own_key = {0}; /* and its memo key buffer (run_point) */
	pthread_mutex_init(&j.mu, NULL);
	pthread_cond_init(&j.filled, NULL);
	pthread_cond_init(&j.free, NULL);
	if (!j.rows || !j.done || !tid || !mem) {
		rc = cli_fail(EXIT_SYSTEM, "sweep", "out of memory");
		goto out;
	}
	if (csv && shard == 1) {
		fprintf(mem, "index");
		for (int i = 0; i < g.naxes; i++)
			fprintf(mem, ",point.%s", g.ax[i].key);
		fprintf(mem, ",%s\n", RPT_SIM_CSV_COLS);
		if (write_row(fd, mem, &rowbuf, &rowlen))
			goto write_failed;
	}
	/* every point reads the same catalogs and config: once, not a stat per point per file */
	cfg_freeze_stamps();
	/* threads - 1 workers; this thread is the writer, and runs points while the row it
	 * writes next is not done */
	for (long t = 1; t < threads && (uint64_t)t < count; t++)
		if (pthread_create(&tid[started], NULL, worker, &j) == 0)
			started++;
	if (count > 0 && (own = eng_new()))
		eng_keep_history(own, false);
	/* the rows in point order: each done one rendered, the run of them written at once
	 * (whole rows only) */
	for (uint64_t i = 0; i < count;) {
		uint64_t from = i;
		pthread_mutex_lock(&j.mu);
		while (!j.done[i % j.nring]) {
			if (room(&j)) {
				uint64_t k = j.next++;
				pthread_mutex_unlock(&j.mu);
				fill(&j, k, own, &own_key);
				pthread_mutex_lock(&j.mu);
				mark_filled(&j, k);
			} else { /* every point is taken: the workers finish theirs */
				pthread_cond_wait(&j.filled, &j.mu);
			}
		}
		pthread_mutex_unlock(&j.mu);
		for (;;) {
			const struct row *r = &j.rows[i % j.nring];
			if (csv)
				emit_csv(mem, &g, first + i, r);
			else
				emit_jsonl(mem, &g, first + i, r);
			if (r->rc) {
				if (!failed++)
					snprintf(first_err, sizeof first_err, "%s", r->err);
				oom += r->rc == EXIT_SYSTEM;
			}
			pthread_mutex_lock(&j.mu);
			j.done[i % j.nring] = 0;
			j.taken = ++i;
			bool more = i < count && j.done[i % j.nring];
			if (j.waiting)
				pthread_cond_broadcast(&j.free);
			pthread_mutex_unlock(&j.mu);
			if (!more)
				break;
		}
		if (write_row(fd, mem, &rowbuf, &rowlen))
			goto write_failed;
		if (tty && (i / CHUNK != from / CHUNK || i == count))
			fprintf(stderr, "\rsweep: %llu / %llu points", (unsigned long long)i,
				(unsigned long long)count);
	}
	if (tty && j.memo) { /* every row is written: no point runs now */
		pthread_mutex_lock(&j.memo->mu);
		if (j.memo->hits)
			fprintf(stderr,
				" (%llu the configuration of an earlier point, not run again)",
				(unsigned long long)j.memo->hits);
		pthread_mutex_unlock(&j.memo->mu);
	}
	if (tty)
		fprintf(stderr, "\n");
	if (cfg_out_close(&out, "--out", err, sizeof err)) {
		rc = cli_fail(EXIT_SYSTEM, "sweep", err);
		goto out;
	}
	if (oom) {
		snprintf(err, sizeof err, "%llu points ran out of memory (their rows say so)",
			 (unsigned long long)oom);
		rc = cli_fail(EXIT_SYSTEM, "sweep", err);
	} else if (count > 0 && failed == count) {
		char msg[sizeof first_err + 40]; /* room for the first error whole */
		snprintf(msg, sizeof msg, "every point failed; the first: %s", first_err);
		rc = cli_fail(EXIT_INVALID, "sweep", msg);
	} else if (failed) {
		fprintf(stderr,
			"tierplan sweep: note: %llu of %llu points failed, their rows say why; "
			"the first: %s\n",
			(unsigned long long)failed, (unsigned long long)count, first_err);
	}
	goto out;
write_failed:
	snprintf(err, sizeof err, "cannot write %.300s: %s",
		 out.is_stdout ? "to standard output" : out.path, strerror(errno));
	rc = cli_fail(EXIT_SYSTEM, "sweep", err);
out:
	/* the workers stop (all points taken, or the writer gave up) before their job goes */
	pthread_mutex_lock(&j.mu);
	j.stop = true;
	pthread_cond_broadcast(&j.free);
	pthread_mutex_unlock(&j.mu);
	for (long t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	eng_free(own);
	pthread_cond_destroy(&j.free);
	pthread_cond_destroy(&j.filled);
	pthread_mutex_destroy(&j.mu);
	if (out.fp)
		cfg_out_abort(&out);
	sig_tmp[0] = '\0';
	if (mem)
		fclose(mem);
	free(rowbuf);
	if (j.memo)
		pthread_mutex_destroy(&j.memo->mu);
	free(j.memo);
	free(j.rows);
	free(j.done);
	free(tid);
	tp_grid_free(&g);
	return rc;
}
