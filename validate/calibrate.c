/* calibrate — see calibrate.h. */
#include "calibrate.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../reports/report.h"
#include "../model/catalog.h"
#include "../sim/opts.h"
#include "../sim/engine.h"
#include "../model/file.h"
#include "../sim/sim.h"
#include "../sim/step.h"
#include "../model/units.h"

#define MAX_SAMPLES 32
#define MAX_SIZES 24

struct result {
	const char *test, *unit;
	enum { ST_OK, ST_WAIVED, ST_FAILED } status;
	char reason[256];
	double samples[MAX_SAMPLES];
	int n;
	double sizes[MAX_SIZES], size_times[MAX_SIZES]; /* per-size medians (copies) */
	int nsizes;
	double size_bytes;                               /* working-set size of the test */
	double latency, bandwidth, fit_r2;               /* fitted, for size sweeps */
	cJSON *extra;                                    /* test-specific fields */
	cJSON *device; /* the CUDA helper's device identity (name, compute capability, ...) */
};


static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
	double t[MAX_SAMPLES];
	memcpy(t, v, (size_t)n * sizeof *t);
	qsort(t, (size_t)n, sizeof *t, cmp_d);
	return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

static void waive(struct result *r, const char *fmt, const char *arg)
{
	r->status = ST_WAIVED;
	snprintf(r->reason, sizeof r->reason, fmt, arg);
}

/* ---- host: DRAM (STREAM copy and triad) ---- */

struct dram_job {
	double *a, *b, *c;
	size_t n;
	int kind; /* 0 copy, 1 triad */
};

static void *dram_worker(void *arg)
{
	struct dram_job *j = arg;
	double *restrict a = j->a, *restrict b = j->b, *restrict c = j->c;
	if (j->kind == 0)
		memcpy(a, b, j->n * sizeof *a);
	else
		for (size_t i = 0; i < j->n; i++)
			a[i] = b[i] + 3.0 * c[i];
	return NULL;
}

static void host_dram(const struct cal_opts *o, struct result *r, int kind)
{
	size_t bytes = o->quick ? (size_t)256 << 20 : (size_t)1 << 30, n = bytes / sizeof(double);
	double *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
	int nt = o->threads, samples = o->quick ? 5 : 10;
	pthread_t tid[256];
	struct dram_job jobs[256];

	r->unit = "B/s";
	r->size_bytes = (double)bytes;
	if (!a || !b || !c) {
		waive(r, "cannot allocate %s for the arrays", o->quick ? "3 x 256 MiB" : "3 x 1 GiB");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		a[i] = 0;
		b[i] = (double)i;
		c[i] = 1;
	}
	for (int s = -1; s < samples; s++) { /* sample -1 is the warm-up */
		double t0 = now();
		for (int t = 0; t < nt; t++) {
			size_t lo = n * (size_t)t / (size_t)nt, hi = n * (size_t)(t + 1) / (size_t)nt;
			jobs[t] = (struct dram_job){a + lo, b + lo, c + lo, hi - lo, kind};
			if (pthread_create(&tid[t], NULL, dram_worker, &jobs[t]))
				dram_worker(&jobs[t]), tid[t] = 0;
		}
		for (int t = 0; t < nt; t++)
			if (tid[t])
				pthread_join(tid[t], NULL);
		double dt = now() - t0;
		/* STREAM counting: copy moves 2 arrays, triad 3 */
		if (s >= 0)
			r->samples[r->n++] = (kind == 0 ? 2.0 : 3.0) * (double)bytes / dt;
	}
	if (a[n / 2] == -1) /* keep the stores */
		fprintf(stderr, "?");
out:
	free(a);
	free(b);
	free(c);
}

/* ---- host: CPU AdamW ---- */

struct adam_job {
	float *p, *g, *m, *v;
	size_t n;
	int step;
};

/* AdamW over fp32 arrays, the update DeepSpeedCPUAdam performs (Loshchilov & Hutter 2019):
 * m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; p -= lr (m^ / (sqrt(v^) + eps) + wd p). */
static void *adam_worker(void *arg)
{
	struct adam_job *j = arg;
	float *restrict p = j->p, *restrict g = j->g, *restrict m = j->m, *restrict v = j->v;
	const float b1 = 0.9f, b2 = 0.999f, lr = 1e-4f, eps = 1e-8f, wd = 0.01f;
	const float c1 = 1.0f / (1.0f - powf(b1, (float)j->step));
	const float c2 = 1.0f / (1.0f - powf(b2, (float)j->step));
	for (size_t i = 0; i < j->n; i++) {
		float gi = g[i];
		float mi = b1 * m[i] + (1 - b1) * gi;
		float vi = b2 * v[i] + (1 - b2) * gi * gi;
		m[i] = mi;
		v[i] = vi;
		p[i] -= lr * (mi * c1 / (sqrtf(vi * c2) + eps) + wd * p[i]);
	}
	return NULL;
}

static void host_adam(const struct cal_opts *o, struct result *r)
{
	size_t n = o->quick ? (size_t)16 << 20 : (size_t)128 << 20;
	float *buf = malloc(4 * n * sizeof(float));
	int nt = o->threads, samples = o->quick ? 5 : 10;
	pthread_t tid[256];
	struct adam_job jobs[256];

	r->unit = "params/s";
	r->size_bytes = 16.0 * (double)n;
	if (!buf) {
		waive(r, "cannot allocate %s of optimizer arrays", o->quick ? "256 MiB" : "2 GiB");
		return;
	}
	for (size_t i = 0; i < 4 * n; i++)
		buf[i] = 1e-3f * (float)(i % 1000);
	for (int s = -1; s < samples; s++) {
		double t0 = now();
		for (int t = 0; t < nt; t++) {
			size_t lo = n * (size_t)t / (size_t)nt, hi = n * (size_t)(t + 1) / (size_t)nt;
			jobs[t] = (struct adam_job){buf + lo, buf + n + lo, buf + 2 * n + lo,
						    buf + 3 * n + lo, hi - lo, s + 2};
			if (pthread_create(&tid[t], NULL, adam_worker, &jobs[t]))
				adam_worker(&jobs[t]), tid[t] = 0;
		}
		for (int t = 0; t < nt; t++)
			if (tid[t])
				pthread_join(tid[t], NULL);
		if (s >= 0)
			r->samples[r->n++] = (double)n / (now() - t0);
	}
	r->extra = cJSON_CreateObject();
	cJSON_AddNumberToObject(r->extra, "threads", nt);
	cJSON_AddNumberToObject(r->extra, "params", (double)n);
	free(buf);
}

/* ---- host: pinned (page-locked) allocation rate ---- */

static void host_pinned(const struct cal_opts *o, struct result *r)
{
	size_t bytes = o->quick ? (size_t)64 << 20 : (size_t)256 << 20;
	r->unit = "B/s";
	r->size_bytes = (double)bytes;
	for (int s = -1; s < (o->quick ? 5 : 10); s++) {
		double t0 = now();
		void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			waive(r, "mmap failed: %s", strerror(errno));
			return;
		}
		if (mlock(p, bytes) != 0) {
			munmap(p, bytes);
			waive(r, "mlock refused (%s): raise RLIMIT_MEMLOCK (ulimit -l) to measure "
				 "pinned allocation",
			      strerror(errno));
			return;
		}
		munlock(p, bytes);
		munmap(p, bytes);
		if (s >= 0)
			r->samples[r->n++] = (double)bytes / (now() - t0);
	}
}

/* ---- storage: fio ---- */

/* What a signal must remove: only the private directory and the file this run created. */
static char cleanup_file[4200], cleanup_dir[4096], cleanup_log[4200];
static volatile sig_atomic_t fio_pid;

/* Removes what fio_target created, and nothing else (unlink and rmdir are async-signal-safe:
 * on_signal calls it too). */
static void fio_target_remove(void)
{
	if (cleanup_file[0])
		unlink(cleanup_file);
	if (cleanup_log[0])
		unlink(cleanup_log);
	if (cleanup_dir[0])
		rmdir(cleanup_dir);
	cleanup_file[0] = cleanup_log[0] = cleanup_dir[0] = '\0';
}

static void on_signal(int sig)
{
	if (fio_pid > 0)
		kill((pid_t)fio_pid, SIGTERM);
	fio_target_remove();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* True when an executable named prog is on PATH (no shell involved). */
static bool on_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4200];

	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t l = strcspn(p, ":");
		if (l && snprintf(buf, sizeof buf, "%.*s/%s", (int)l, p, prog) < (int)sizeof buf &&
		    access(buf, X_OK) == 0)
			return true;
		p += l + (p[l] == ':');
	}
	return false;
}

/*
 * The fio target under --dir: a fresh private directory (mkdtemp, 0700) holding a file created
 * here with O_CREAT|O_EXCL|O_NOFOLLOW, so fio never writes through a name someone planted and
 * no file of the user's is touched. 0 ok, -1 with errno.
 */
static int fio_target(const char *dir, char *file, size_t n)
{
	if (snprintf(cleanup_dir, sizeof cleanup_dir, "%s/tierplan-fio-XXXXXX", dir) >=
		    (int)sizeof cleanup_dir ||
	    !mkdtemp(cleanup_dir)) {
		cleanup_dir[0] = '\0';
		return -1;
	}
	if (snprintf(file, n, "%s/fio.dat", cleanup_dir) >= (int)n) {
		rmdir(cleanup_dir);
		cleanup_dir[0] = '\0';
		return -1;
	}
	int fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rmdir(cleanup_dir);
		cleanup_dir[0] = '\0';
		return -1;
	}
	close(fd);
	snprintf(cleanup_file, sizeof cleanup_file, "%s", file);
	return 0;
}

/* Runs fio with args, its JSON on stdout into out (malloc'd). 0 ok. */
static int run_fio(char *const argv[], char **out)
{
	int fd[2];
	if (pipe(fd))
		return -1;
	fflush(NULL); /* the child must not write our buffers again */
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		FILE *null = freopen("/dev/null", "w", stderr);
		(void)null;
		execvp("fio", argv);
		_exit(127);
	}
	fio_pid = pid;
	close(fd[1]);
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	ssize_t k;
	while (buf && (k = read(fd[0], buf + len, cap - len - 1)) > 0) {
		len += (size_t)k;
		if (len + 1 == cap) {
			char *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				buf = NULL;
			}
			buf = nb;
		}
	}
	close(fd[0]);
	int status;
	waitpid(pid, &status, 0);
	fio_pid = 0;
	if (!buf)
		return -1;
	buf[len] = '\0';
	*out = buf;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : WIFEXITED(status) ? WEXITSTATUS(status)
											 : -1;
}

/* fio's file under --dir for a test that writes `need` bytes there: the directory readable,
 * that much free, then fio_target. 0 ok, -1 with r waived saying which. */
static int fio_file(const struct cal_opts *o, double need, struct result *r, char *file,
		    size_t n)
{
	struct statvfs vf;
	char note[32];
	if (statvfs(o->dir, &vf) != 0) {
		waive(r, "--dir %s is not accessible", o->dir);
		return -1;
	}
	if ((double)vf.f_bavail * (double)vf.f_frsize < need) {
		waive(r, "not enough free space under --dir (needs %s)",
		      cfg_fmt_bytes(need, note, sizeof note));
		return -1;
	}
	if (fio_target(o->dir, file, n)) {
		waive(r, "cannot create a private directory and file under --dir %s", o->dir);
		return -1;
	}
	return 0;
}

static void flash_fio(const struct cal_opts *o, struct result *r, bool write)
{
	char filename[4200], size[32], runtime[32];
	double bytes = o->quick ? 1073741824.0 : 4294967296.0;

	r->unit = "B/s";
	r->size_bytes = bytes;
	if (!on_path("fio")) {
		waive(r, "%s", "fio is not installed (apt-get install fio)");
		return;
	}
	if (o->device) {
		if (!o->destroy) {
			waive(r, "--device %s needs --destroy-data: fio would overwrite it", o->device);
			return;
		}
		snprintf(filename, sizeof filename, "%s", o->device);
	} else if (fio_file(o, 1.5 * bytes, r, filename, sizeof filename)) {
		return;
	}
	snprintf(size, sizeof size, "--size=%.0f", bytes);
	snprintf(runtime, sizeof runtime, "--runtime=%d", o->quick ? 2 : 15);
	char fname[4300];
	snprintf(fname, sizeof fname, "--filename=%s", filename);
	for (int s = 0; s < (o->quick ? 3 : 5); s++) {
		char *argv[] = {"fio",         "--name=tierplan",  fname,
				size,          write ? "--rw=write" : "--rw=read",
				"--bs=1M",     "--iodepth=32",     "--ioengine=libaio",
				"--direct=1",  "--time_based",     runtime,
				"--ramp_time=1", "--output-format=json", NULL};
		char *json = NULL;
		int rc = run_fio(argv, &json);
		if (rc != 0 || !json) {
			/* direct I/O is refused on some filesystems (tmpfs): say so */
			waive(r, "%s", rc == 127 ? "fio could not be started"
					     : "fio failed: the filesystem under --dir may not allow "
					       "O_DIRECT (tmpfs); give --dir on the drive to measure");
			free(json);
			break;
		}
		cJSON *root = cJSON_Parse(json);
		free(json);
		const cJSON *job = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "jobs"), 0);
		const cJSON *side = cJSON_GetObjectItemCaseSensitive(job, write ? "write" : "read");
		const cJSON *bw = cJSON_GetObjectItemCaseSensitive(side, "bw_bytes");
		if (!cJSON_IsNumber(bw) || bw->valuedouble <= 0) {
			waive(r, "%s", "fio gave no bandwidth (see fio --output-format=json)");
			cJSON_Delete(root);
			break;
		}
		r->samples[r->n++] = bw->valuedouble;
		cJSON_Delete(root);
	}
	fio_target_remove();
	r->extra = cJSON_CreateObject();
	cJSON_AddStringToObject(r->extra, "target", o->device ? o->device : o->dir);
	cJSON_AddStringToObject(r->extra, "fio", "--bs=1M --iodepth=32 --ioengine=libaio --direct=1 "
						 "--time_based");
}

/* Samples of a bandwidth log flash_fill reads at most (a 0.5 s log of a 30-minute fill) */
#define FILL_SAMPLES 4096

/*
 * One sequential write stream of o->fill bytes into a file of the private directory under
 * --dir, fio logging its rate every 0.5 s into that directory (--write_bw_log: "time (msec),
 * value (KiB/s), direction, block size, offset" a line), and the drop past a consumer drive's
 * SLC cache fitted to the log (cal_fit_slc). Opt-in: it writes as much as it is told to, which
 * wears the drive, and must exceed the cache to find it (TechPowerUp's fills: 113-600 GB).
 */
static void flash_fill(const struct cal_opts *o, struct result *r)
{
	char filename[4200], arg[3][4300];

	r->unit = "B/s";
	r->size_bytes = o->fill;
	if (!(o->fill > 0)) {
		waive(r, "%s", "give --flash-fill SIZE (more than the drive's SLC cache, "
			       "e.g. 400GB) and --dir on the drive: the stream wears it");
		return;
	}
	if (!on_path("fio")) {
		waive(r, "%s", "fio is not installed (apt-get install fio)");
		return;
	}
	if (o->device || !o->dir_given) {
		waive(r, "%s", "--flash-fill writes a file under --dir on the drive (not a raw "
			       "device, not a temporary directory)");
		return;
	}
	if (fio_file(o, 1.1 * o->fill, r, filename, sizeof filename))
		return;
	if (snprintf(cleanup_log, sizeof cleanup_log, "%s/fill_bw.1.log", cleanup_dir) >=
	    (int)sizeof cleanup_log) {
		fio_target_remove();
		waive(r, "cannot create a private directory and file under --dir %s", o->dir);
		return;
	}
	snprintf(arg[0], sizeof arg[0], "--filename=%s", filename);
	snprintf(arg[1], sizeof arg[1], "--size=%.0f", o->fill);
	snprintf(arg[2], sizeof arg[2], "--write_bw_log=%s/fill", cleanup_dir);
	char *argv[] = {"fio",		    "--name=tierplan", arg[0],	      arg[1],
			"--rw=write",	    "--bs=1M",	       "--iodepth=32", "--ioengine=libaio",
			"--direct=1",	    arg[2],	       "--log_avg_msec=500",
			"--output-format=json", NULL};
	char *json = NULL;
	int rc = run_fio(argv, &json);
	cJSON *root = rc == 0 && json ? cJSON_Parse(json) : NULL;
	free(json);
	const cJSON *job = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "jobs"), 0);
	const cJSON *bwj = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(job, "write"), "bw_bytes");
	double bw = cJSON_IsNumber(bwj) ? bwj->valuedouble : 0; /* the stream's mean, bytes/s */
	cJSON_Delete(root);
	static double t[FILL_SAMPLES], rate[FILL_SAMPLES];
	int n = 0;
	FILE *fp = bw > 0 ? fopen(cleanup_log, "re") : NULL;
	double ms, kib;
	while (fp && n < FILL_SAMPLES && fscanf(fp, "%lf, %lf, %*[^\n]", &ms, &kib) == 2) {
		t[n] = ms / 1e3;
		rate[n++] = kib * 1024.0;
	}
	if (fp)
		fclose(fp);
	fio_target_remove();
	if (!(bw > 0)) {
		waive(r, "%s", rc == 127 ? "fio could not be started"
				     : "fio failed: the filesystem under --dir may not allow "
				       "O_DIRECT (tmpfs); give --dir on the drive to measure");
		return;
	}
	r->samples[r->n++] = bw;
	r->extra = cJSON_CreateObject();
	cJSON_AddStringToObject(r->extra, "target", o->dir);
	cJSON_AddNumberToObject(r->extra, "samples", n);
	double cache = 0, after = 0;
	char a[32], b[32];
	if (cal_fit_slc(t, rate, n, &cache, &after) == 0) {
		cJSON_AddNumberToObject(r->extra, "slc_cache_bytes", cache);
		cJSON_AddNumberToObject(r->extra, "write_after_cache", after);
		snprintf(r->reason, sizeof r->reason, "SLC cache %s, then %s",
			 cfg_fmt_bytes(cache, a, sizeof a), cfg_fmt_rate(after, b, sizeof b));
	} else {
		snprintf(r->reason, sizeof r->reason, "no drop within %s%s",
			 cfg_fmt_bytes(o->fill, a, sizeof a),
			 n < CAL_SLC_MIN_SAMPLES
				 ? ": too short a stream to tell, give a larger --flash-fill"
				 : ": no SLC cache, or a larger one");
	}
}

/* ---- CUDA: the helper binary ---- */

static void fit_link(struct result *r)
{
	cal_fit_link(r->sizes, r->size_times, r->nsizes, &r->latency, &r->bandwidth, &r->fit_r2);
	if (strcmp(r->test, "cuda_l2_chain"))
		return;
	/* the L2's figures (cal_fit_l2) where the sweep shows them, in extra for the profile */
	double fixed, bw, cache;
	char a[32], b[32];
	if (cal_fit_l2(r->sizes, r->size_times, r->nsizes, &fixed, &bw, &cache)) {
		snprintf(r->reason, sizeof r->reason, "%s",
			 "no L2 regime in the sweep: eager chains stay at the HBM rate");
		return;
	}
	if (!r->extra)
		r->extra = cJSON_CreateObject();
	cJSON_AddNumberToObject(r->extra, "l2_cache", cache);
	cJSON_AddNumberToObject(r->extra, "l2_bandwidth", bw);
	cJSON_AddNumberToObject(r->extra, "l2_kernel_fixed_s", fixed);
	snprintf(r->reason, sizeof r->reason, "L2 to %s at %s after %.2f us a kernel",
		 cfg_fmt_bytes(cache, a, sizeof a), cfg_fmt_rate(bw, b, sizeof b), fixed * 1e6);
}

/* Runs the helper for one test; it prints one JSON object. Waived when absent or no GPU. */
/* The length of an array of at most max positive finite numbers, else -1. */
static int positives(const cJSON *arr, int max)
{
	const cJSON *it;
	int n = 0;

	if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) > max)
		return -1;
	cJSON_ArrayForEach(it, arr)
	{
		if (!cJSON_IsNumber(it) || !(it->valuedouble > 0) || !isfinite(it->valuedouble))
			return -1;
		n++;
	}
	return n;
}

/* Runs CUDA test r through the helper. *hung: a helper that outran the timeout was killed
 * (the GPU or its driver hangs), and the tests after it fail without running. */
static void cuda_test(const struct cal_opts *o, struct result *r, bool *hung)
{
	int limit = o->test_timeout > 0 ? o->test_timeout : CAL_TEST_TIMEOUT;
	r->unit = strstr(r->test, "gemm") ? "FLOP/s" : strstr(r->test, "tiering") ? "s" : "B/s";
	if (*hung) {
		char msg[96];
		snprintf(msg, sizeof msg, "not run: an earlier CUDA test hung (killed after %d s)",
			 limit);
		waive(r, "%s", msg);
		r->status = ST_FAILED;
		return;
	}
	if (!o->cuda_helper || access(o->cuda_helper, X_OK) != 0) {
		waive(r, "%s", "the CUDA helper (bin/tierplan-cuda) is not built: run make cuda where "
			       "nvcc exists");
		return;
	}
	int fd[2];
	if (pipe(fd)) {
		waive(r, "%s", "pipe failed");
		return;
	}
	fflush(NULL); /* the child must not write our buffers again */
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		char idx[16], shape[64];
		snprintf(idx, sizeof idx, "%d", o->gpu_index);
		snprintf(shape, sizeof shape, "%d,%d,%d,%d", o->gemm_shape[0], o->gemm_shape[1],
			 o->gemm_shape[2], o->gemm_shape[3]);
		char *args[] = {(char *)o->cuda_helper, (char *)r->test,
				o->quick ? "--quick" : "--full", "--gpu-index", idx,
				o->gemm_shape[0] > 0 ? "--shape" : NULL, shape, NULL};
		execv(o->cuda_helper, args);
		_exit(127);
	}
	close(fd[1]);
	char buf[1 << 16];
	size_t len = 0;
	double t0 = now();
	bool killed = false;
	while (pid > 0 && len < sizeof buf - 1) {
		double left = limit - (now() - t0);
		if (left <= 0) {
			kill(pid, SIGKILL);
			killed = true;
			break;
		}
		struct pollfd pf = {fd[0], POLLIN, 0};
		int ready = poll(&pf, 1, (int)ceil(left * 1000));
		if (ready < 0 && errno != EINTR)
			break;
		if (ready <= 0)
			continue;
		ssize_t k = read(fd[0], buf + len, sizeof buf - len - 1);
		if (k <= 0)
			break;
		len += (size_t)k;
	}
	close(fd[0]);
	buf[len] = '\0';
	/* its exit, within the same limit: a helper can hang after its output too (a driver
	 * that does not let its context go) */
	int status = 0;
	while (pid > 0 && !killed) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			break;
		if (now() - t0 >= limit) {
			kill(pid, SIGKILL);
			killed = true;
			break;
		}
		nanosleep(&(struct timespec){0, 10000000}, NULL); /* 10 ms */
	}
	if (pid > 0 && killed)
		waitpid(pid, &status, 0);
	cJSON *j = cJSON_Parse(buf);
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "status");
	/* a helper that crashed, exited non-zero or printed no JSON (an inf or a nan is not
	 * JSON) failed: only its own "waived" waives */
	char msg[160];
	if (killed) {
		snprintf(msg, sizeof msg,
			 "the CUDA helper ran longer than %d s and was killed (a hung GPU or "
			 "driver? --test-timeout sets the limit)",
			 limit);
		waive(r, "%s", msg);
		r->status = ST_FAILED;
		*hung = true;
	} else if (pid < 0 || WIFSIGNALED(status)) {
		snprintf(msg, sizeof msg, "the CUDA helper could not run or was killed (signal %d)",
			 pid < 0 ? 0 : WTERMSIG(status));
		waive(r, "%s", msg);
		r->status = ST_FAILED;
	} else if (!cJSON_IsString(st)) {
		snprintf(msg, sizeof msg,
			 "the CUDA helper gave no result (exit %d; inf, nan or no JSON on stdout)",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		waive(r, "%s", msg);
		r->status = ST_FAILED;
	} else if (!strcmp(st->valuestring, "ok") && WIFEXITED(status) && WEXITSTATUS(status)) {
		snprintf(msg, sizeof msg, "the CUDA helper said ok but exited %d",
			 WEXITSTATUS(status));
		waive(r, "%s", msg);
		r->status = ST_FAILED;
	} else if (strcmp(st->valuestring, "ok") != 0) {
		const cJSON *why = cJSON_GetObjectItemCaseSensitive(j, "reason");
		waive(r, "%s", cJSON_IsString(why) ? why->valuestring : "waived by the CUDA helper");
		if (!strcmp(st->valuestring, "failed"))
			r->status = ST_FAILED;
	} else {
		const cJSON *arr = cJSON_GetObjectItemCaseSensitive(j, "samples");
		const cJSON *sz = cJSON_GetObjectItemCaseSensitive(j, "sizes");
		const cJSON *tm = cJSON_GetObjectItemCaseSensitive(j, "times");
		const cJSON *ex = cJSON_GetObjectItemCaseSensitive(j, "extra");
		const char *bad = NULL;
		int ns = positives(arr, MAX_SAMPLES), nz = positives(sz, MAX_SIZES);
		if (ns < 1)
			bad = "'samples' must be 1 to 32 positive numbers";
		else if ((sz || tm) && (nz < 0 || positives(tm, MAX_SIZES) != nz))
			bad = "'sizes' and 'times' must be arrays of the same length (at most 24) of "
			      "positive numbers";
		else if (ex && !cJSON_IsObject(ex))
			bad = "'extra' must be an object";
		if (bad) {
			waive(r, "the CUDA helper's output is malformed: %s", bad);
			r->status = ST_FAILED;
		} else {
			for (int i = 0; i < ns; i++)
				r->samples[r->n++] = cJSON_GetArrayItem(arr, i)->valuedouble;
			for (int i = 0; i < nz; i++) {
				r->sizes[i] = cJSON_GetArrayItem(sz, i)->valuedouble;
				r->size_times[i] = cJSON_GetArrayItem(tm, i)->valuedouble;
			}
			r->nsizes = nz > 0 ? nz : 0;
			if (ex)
				r->extra = cJSON_Duplicate(ex, 1);
			const cJSON *dev = cJSON_GetObjectItemCaseSensitive(j, "device");
			if (cJSON_IsObject(dev))
				r->device = cJSON_Duplicate(dev, 1);
			if (r->nsizes)
				fit_link(r);
		}
	}
	cJSON_Delete(j);
}

/* ---- the registry ---- */

enum { K_HOST, K_STORAGE, K_CUDA };
static const struct test {
	const char *name;
	int kind;
	const char *what;
} tests[] = {
	{"host_dram_copy", K_HOST, "DRAM bandwidth, STREAM copy, all cores"},
	{"host_dram_triad", K_HOST, "DRAM bandwidth, STREAM triad, all cores"},
	{"host_cpu_adamw", K_HOST, "CPU AdamW over fp32 arrays, all cores"},
	{"host_pinned_alloc", K_HOST, "page-locked allocation rate"},
	{"flash_seq_read", K_STORAGE, "fio sequential read, 1 MiB, QD32, direct"},
	{"flash_seq_write", K_STORAGE, "fio sequential write, 1 MiB, QD32, direct"},
	{"flash_slc_fill", K_STORAGE, "one write stream of --flash-fill bytes: the SLC cache"},
	{"cuda_h2d_pinned", K_CUDA, "host-to-device copies, pinned, 4 KiB-1 GiB"},
	{"cuda_d2h_pinned", K_CUDA, "device-to-host copies, pinned, 4 KiB-1 GiB"},
	{"cuda_h2d_pageable", K_CUDA, "host-to-device copies, pageable"},
	{"cuda_d2h_pageable", K_CUDA, "device-to-host copies, pageable"},
	{"cuda_bidir_pinned", K_CUDA, "both directions at once, pinned"},
	{"cuda_d2d", K_CUDA, "device-to-device copy (HBM)"},
	{"cuda_l2_chain", K_CUDA, "back-to-back kernels through the L2, 1-512 MiB"},
	{"cuda_gemm_bf16", K_CUDA, "bf16 GEMM via cuBLAS at layer shapes"},
	{"cuda_gemm_fp8", K_CUDA, "FP8 GEMM via cuBLASLt at layer shapes, as Transformer Engine"},
	{"cuda_tiering", K_CUDA, "layer loop: weights streamed into a double buffer under GEMMs"},
};
#define NTESTS (int)(sizeof tests / sizeof tests[0])

static void run_test(const struct cal_opts *o, int i, struct result *r, bool *cuda_hung)
{
	memset(r, 0, sizeof *r);
	r->test = tests[i].name;
	if (!strcmp(r->test, "host_dram_copy"))
		host_dram(o, r, 0);
	else if (!strcmp(r->test, "host_dram_triad"))
		host_dram(o, r, 1);
	else if (!strcmp(r->test, "host_cpu_adamw"))
		host_adam(o, r);
	else if (!strcmp(r->test, "host_pinned_alloc"))
		host_pinned(o, r);
	else if (!strcmp(r->test, "flash_seq_read"))
		flash_fio(o, r, false);
	else if (!strcmp(r->test, "flash_seq_write"))
		flash_fio(o, r, true);
	else if (!strcmp(r->test, "flash_slc_fill"))
		flash_fill(o, r);
	else
		cuda_test(o, r, cuda_hung);
	if (r->status == ST_OK && r->n == 0 && r->nsizes == 0)
		waive(r, "%s", "no samples");
}

/* ---- the profile ---- */

static const char *status_name(int s)
{
	return s == ST_OK ? "ok" : s == ST_WAIVED ? "waived" : "failed";
}

static void machine(cJSON *m)
{
	struct utsname u;
	char line[512], cpu[256] = "unknown";
	FILE *fp = fopen("/proc/cpuinfo", "r");
	while (fp && fgets(line, sizeof line, fp))
		if (!strncmp(line, "model name", 10)) {
			char *c = strchr(line, ':');
			if (c) {
				snprintf(cpu, sizeof cpu, "%s", c + 2);
				cpu[strcspn(cpu, "\n")] = '\0';
			}
			break;
		}
	if (fp)
		fclose(fp);
	cJSON_AddStringToObject(m, "cpu", cpu);
	cJSON_AddNumberToObject(m, "cpu_cores", (double)sysconf(_SC_NPROCESSORS_ONLN));
	cJSON_AddNumberToObject(m, "dram_bytes",
				(double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE));
	if (uname(&u) == 0) {
		cJSON_AddStringToObject(m, "kernel", u.release);
		cJSON_AddStringToObject(m, "hostname", u.nodename);
	}
}

/* A cJSON number member, or 0. */
static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/*
 * The GEMM rate and the fixed time per matrix kernel (cal_fit_gemm) from the helper's layer
 * GEMMs: 6 x tokens x params FLOPs per pass set (the layer's seven linears, whose shapes the
 * helper reports), its kernels per pass set ("kernels"), at its token count and, where it timed
 * one, at a smaller one. The measured rate stays beside the fit in the test's record. The FP8
 * GEMMs give their rate alone (gemm_fp8_flops): the simulator keeps one fixed time per matrix
 * kernel, the bf16 test's, and the FP8 fit's stays in its record.
 */
static void gemm_fit(cJSON *fit, cJSON *rec, const cJSON *extra, double rate, bool fp8)
{
	const char *key = fp8 ? "gemm_fp8_flops" : "gemm_flops";
	double h = num(extra, "hidden"), kv = num(extra, "kv"), in = num(extra, "intermediate");
	double params = 2 * h * h + 2 * h * kv + 3 * h * in;
	double flops[2] = {6 * num(extra, "tokens") * params, 6 * num(extra, "small_tokens") * params};
	double rates[2] = {rate, 0}, r, fixed, sv[MAX_SAMPLES];
	int kernels = (int)num(extra, "kernels");
	const cJSON *small = cJSON_GetObjectItemCaseSensitive(extra, "small_samples"), *it;
	int ns = 0;
	if (positives(small, MAX_SAMPLES) > 0) {
		cJSON_ArrayForEach(it, small)
			sv[ns++] = it->valuedouble;
		rates[1] = median(sv, ns);
	}
	if (!(flops[0] > 0) || kernels < 1) { /* a helper that did not say its shape: as measured */
		cJSON_AddNumberToObject(fit, key, rate);
		return;
	}
	bool both = cal_fit_gemm(flops, rates, kernels, &r, &fixed) == 0;
	cJSON_AddNumberToObject(fit, key, r);
	if (both && !fp8)
		cJSON_AddNumberToObject(fit, "matmul_fixed_s", fixed);
	cJSON_AddNumberToObject(rec, "fit_gemm_flops", r);
	cJSON_AddNumberToObject(rec, "fit_matmul_fixed_s", fixed);
	char how[96];
	if (both)
		snprintf(how, sizeof how, "t = %d x fixed + F / rate through both token counts",
			 kernels);
	else
		snprintf(how, sizeof how, "rate net of the simulator's %.1f us per kernel",
			 STEP_MATMUL_FIXED * 1e6);
	cJSON_AddStringToObject(rec, "fit_gemm_method", how);
}

/* ---- the simulator's prediction of the tiering kernel ---- */

/* A positive, finite cJSON number member, or 0. */
static double pos(const cJSON *o, const char *k)
{
	double v = num(o, k);
	return v > 0 && isfinite(v) ? v : 0;
}

int cal_replay_tiering(const cJSON *profile, struct cal_tiering *t)
{
	const cJSON *fit = cJSON_GetObjectItemCaseSensitive(profile, "fitted"), *it, *ex = NULL;
	double measured = 0;
	memset(t, 0, sizeof *t);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(profile, "measurements"))
	{
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(it, "test");
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(it, "status");
		if (cJSON_IsString(n) && !strcmp(n->valuestring, "cuda_tiering") &&
		    cJSON_IsString(st) && !strcmp(st->valuestring, "ok")) {
			ex = cJSON_GetObjectItemCaseSensitive(it, "extra");
			measured = pos(it, "value");
		}
	}
	double L = num(ex, "layers"), bytes = pos(ex, "layer_bytes");
	double bw = pos(fit, "pcie_h2d_bandwidth"), gemm = pos(fit, "gemm_flops");
	/* what the CUDA helper records: a layer count of a real model, positive sizes */
	if (!ex || !(L >= 1 && L <= 1024) || !bytes || !measured || !bw || !gemm)
		return 1;
	double lat = pos(fit, "pcie_h2d_latency_s"), fixed = pos(fit, "matmul_fixed_s");
	/* the helper's 7 kernels a layer; bounds keep a hand-edited profile's figures to what
	 * the engine's nanosecond clock holds */
	double kernels = num(ex, "kernels");
	double gfix = fmin((kernels >= 0 && kernels <= 1000 ? kernels : 0) *
				   (fixed ? fixed : STEP_MATMUL_FIXED),
			   3600);
	const cJSON *bal = cJSON_GetObjectItemCaseSensitive(ex, "balanced");
	t->measured = measured;
	t->predicted =
		cal_predict_tiering((int)L, bytes, pos(ex, "layer_flops"), bw, lat, gemm, gfix);
	/* the helper's own parts as a 1 GB/s link and a 1 PFLOP/s GEMM rate */
	double c = pos(ex, "copy_only_s"), g = pos(ex, "compute_only_s");
	if (c && g)
		t->parts = cal_predict_tiering((int)L, c * 1e9, g * 1e15, 1e9, 0, 1e15, 0);
	t->bal_measured = pos(bal, "overlapped_s");
	t->bal_tokens = (int)num(bal, "tokens");
	if (t->bal_measured)
		t->bal_predicted = cal_predict_tiering((int)L, bytes, pos(bal, "layer_flops"), bw,
						       lat, gemm, gfix);
	return t->predicted > 0 ? 0 : 1;
}

/* Writes the profile to `out`; tk gets its tiering kernel replayed (cal_replay_tiering), which
 * the kernel's record carries too. */
static int write_profile(const char *out, const struct result *rs, int n, const struct cal_opts *o,
			 struct cal_tiering *tk, char *err, size_t errlen)
{
	cJSON *root = cJSON_CreateObject(), *m, *arr, *fit, *trec = NULL;
	char date[32];
	time_t t = time(NULL);
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	cJSON_AddNumberToObject(root, "schema_version", TIERPLAN_SCHEMA_VERSION);
	cJSON_AddStringToObject(root, "tool_version", TIERPLAN_VERSION);
	cJSON_AddStringToObject(root, "command", "calibrate");
	cJSON_AddStringToObject(root, "date", date);
	cJSON_AddStringToObject(root, "mode", o->quick ? "quick" : "full");
	m = cJSON_AddObjectToObject(root, "machine");
	machine(m);
	for (int i = 0; i < n; i++) /* the GPU the CUDA figures were measured on */
		if (rs[i].device) {
			cJSON_AddItemToObject(root, "device", cJSON_Duplicate(rs[i].device, 1));
			break;
		}
	arr = cJSON_AddArrayToObject(root, "measurements");
	fit = cJSON_AddObjectToObject(root, "fitted");
	for (int i = 0; i < n; i++) {
		const struct result *r = &rs[i];
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "test", r->test);
		cJSON_AddStringToObject(x, "status", status_name((int)r->status));
		if (r->status != ST_OK) {
			cJSON_AddStringToObject(x, "reason", r->reason);
			cJSON_AddNullToObject(x, "value");
		} else {
			cJSON_AddNumberToObject(x, "value", r->n ? median(r->samples, r->n) : r->bandwidth);
		}
		cJSON_AddStringToObject(x, "unit", r->unit ? r->unit : "");
		cJSON *s = cJSON_AddArrayToObject(x, "samples");
		double mn = INFINITY, mx = -INFINITY;
		for (int k = 0; k < r->n; k++) {
			cJSON_AddItemToArray(s, cJSON_CreateNumber(r->samples[k]));
			mn = fmin(mn, r->samples[k]);
			mx = fmax(mx, r->samples[k]);
		}
		if (r->n) {
			cJSON_AddNumberToObject(x, "min", mn);
			cJSON_AddNumberToObject(x, "max", mx);
			cJSON_AddNumberToObject(x, "median", median(r->samples, r->n));
		}
		if (r->size_bytes > 0)
			cJSON_AddNumberToObject(x, "size_bytes", r->size_bytes);
		if (r->nsizes) {
			cJSON *sz = cJSON_AddArrayToObject(x, "sizes"), *tm;
			tm = cJSON_AddArrayToObject(x, "times");
			for (int k = 0; k < r->nsizes; k++) {
				cJSON_AddItemToArray(sz, cJSON_CreateNumber(r->sizes[k]));
				cJSON_AddItemToArray(tm, cJSON_CreateNumber(r->size_times[k]));
			}
			cJSON_AddNumberToObject(x, "fit_latency_s", r->latency);
			cJSON_AddNumberToObject(x, "fit_bandwidth", r->bandwidth);
			cJSON_AddNumberToObject(x, "fit_r2", r->fit_r2);
		}
		if (r->extra)
			cJSON_AddItemToObject(x, "extra", cJSON_Duplicate(r->extra, 1));
		cJSON_AddItemToArray(arr, x);
		if (r->status != ST_OK)
			continue;
		double v = r->n ? median(r->samples, r->n) : 0;
		if (!strcmp(r->test, "host_dram_copy"))
			cJSON_AddNumberToObject(fit, "dram_bandwidth", v);
		else if (!strcmp(r->test, "host_cpu_adamw"))
			cJSON_AddNumberToObject(fit, "cpu_adam_rate_per_core",
						v / (double)sysconf(_SC_NPROCESSORS_ONLN));
		else if (!strcmp(r->test, "flash_seq_read"))
			cJSON_AddNumberToObject(fit, "flash_read_bandwidth", v);
		else if (!strcmp(r->test, "flash_seq_write"))
			cJSON_AddNumberToObject(fit, "flash_write_bandwidth", v);
		else if (!strcmp(r->test, "flash_slc_fill") &&
			 cJSON_GetObjectItemCaseSensitive(r->extra, "slc_cache_bytes")) {
			cJSON_AddNumberToObject(fit, "flash_slc_cache",
						num(r->extra, "slc_cache_bytes"));
			cJSON_AddNumberToObject(fit, "flash_write_after_cache",
						num(r->extra, "write_after_cache"));
		}
		else if (!strcmp(r->test, "cuda_h2d_pinned") && r->bandwidth > 0) {
			cJSON_AddNumberToObject(fit, "pcie_h2d_bandwidth", r->bandwidth);
			cJSON_AddNumberToObject(fit, "pcie_h2d_latency_s", r->latency);
		} else if (!strcmp(r->test, "cuda_d2h_pinned") && r->bandwidth > 0)
			cJSON_AddNumberToObject(fit, "pcie_d2h_bandwidth", r->bandwidth);
		else if (!strcmp(r->test, "cuda_h2d_pageable") && r->bandwidth > 0)
			cJSON_AddNumberToObject(fit, "pcie_h2d_pageable_bandwidth", r->bandwidth);
		else if (!strcmp(r->test, "cuda_d2h_pageable") && r->bandwidth > 0)
			cJSON_AddNumberToObject(fit, "pcie_d2h_pageable_bandwidth", r->bandwidth);
		else if (!strcmp(r->test, "cuda_bidir_pinned"))
			cJSON_AddNumberToObject(fit, "pcie_bidir_bandwidth", v);
		else if (!strcmp(r->test, "cuda_d2d"))
			cJSON_AddNumberToObject(fit, "hbm_bandwidth", v);
		else if (!strcmp(r->test, "cuda_l2_chain") &&
			 cJSON_GetObjectItemCaseSensitive(r->extra, "l2_cache")) {
			cJSON_AddNumberToObject(fit, "l2_cache", num(r->extra, "l2_cache"));
			cJSON_AddNumberToObject(fit, "l2_bandwidth", num(r->extra, "l2_bandwidth"));
			cJSON_AddNumberToObject(fit, "l2_kernel_fixed_s",
						num(r->extra, "l2_kernel_fixed_s"));
		}
		else if (!strcmp(r->test, "cuda_gemm_bf16") || !strcmp(r->test, "cuda_gemm_fp8"))
			gemm_fit(fit, x, r->extra, v, !strcmp(r->test, "cuda_gemm_fp8"));
		else if (!strcmp(r->test, "cuda_tiering"))
			trec = x;
	}
	if (cal_replay_tiering(root, tk) == 0 && trec) {
		cJSON_AddNumberToObject(trec, "predicted", tk->predicted);
		cJSON_AddNumberToObject(trec, "prediction_error", tk->predicted / tk->measured - 1);
		if (tk->parts > 0) {
			cJSON_AddNumberToObject(trec, "predicted_from_parts", tk->parts);
			cJSON_AddNumberToObject(trec, "prediction_from_parts_error",
						tk->parts / tk->measured - 1);
		}
		if (tk->bal_predicted > 0) {
			cJSON_AddNumberToObject(trec, "balanced_predicted", tk->bal_predicted);
			cJSON_AddNumberToObject(trec, "balanced_prediction_error",
						tk->bal_predicted / tk->bal_measured - 1);
		}
	}
	struct cfg_out f;
	int rc = cfg_out_open(&f, out, "--out", err, errlen);
	if (!rc) {
		char *text = cJSON_Print(root);
		fprintf(f.fp, "%s\n", text ? text : "{}");
		free(text);
		rc = cfg_out_close(&f, "--out", err, errlen);
	}
	cJSON_Delete(root);
	return rc;
}

int cal_test_count(void)
{
	return NTESTS;
}

const char *cal_test_name(int i, const char **what)
{
	if (i < 0 || i >= NTESTS)
		return NULL;
	if (what)
		*what = tests[i].what;
	return tests[i].name;
}

int cal_run(const struct cal_opts *opts, FILE *log, char *err, size_t errlen)
{
	struct cal_opts o = *opts;
	const char *out = o.out ? o.out : "profile.json", *list = o.tests;
	char tmpdir[] = "/tmp/tierplan-calibrate-XXXXXX", helper[4200];
	bool made_dir = false;

	if (o.threads < 1) {
		o.threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
		if (o.threads < 1 || o.threads > 256)
			o.threads = o.threads < 1 ? 1 : 256;
	}
	if (o.destroy && !o.device)
		return snprintf(err, errlen, "--destroy-data goes with --device DEV"), EXIT_USAGE;
	if (o.device && !o.destroy)
		return snprintf(err, errlen, "--device %s: fio would overwrite the device; add "
					     "--destroy-data to allow it",
				o.device),
		       EXIT_INVALID;
	/* the profile's path is checked before minutes of measuring */
	if (cfg_out_check(out, "--out", err, errlen))
		return EXIT_INVALID;
	if (list) /* check the names before measuring anything */
		for (const char *p = list; *p;) {
			size_t l = strcspn(p, ",");
			bool known = false;
			for (int i = 0; i < NTESTS; i++)
				known |= strlen(tests[i].name) == l && !strncmp(tests[i].name, p, l);
			if (!known) {
				char name[64], hint[96];
				const char *names[NTESTS];
				for (int i = 0; i < NTESTS; i++)
					names[i] = tests[i].name;
				snprintf(name, sizeof name, "%.*s", (int)(l < 63 ? l : 63), p);
				snprintf(err, errlen,
					 "--tests: unknown test '%s'%s (see calibrate --help)", name,
					 cfg_near_hint(cfg_did_you_mean(name, names, NTESTS), hint,
						       sizeof hint));
				return EXIT_INVALID;
			}
			p += l + (p[l] == ',');
		}
	o.dir_given = o.dir != NULL;
	if (!o.dir) {
		if (!mkdtemp(tmpdir))
			return snprintf(err, errlen, "cannot create a temporary directory"), EXIT_SYSTEM;
		o.dir = tmpdir;
		made_dir = true;
	} else if (cfg_mkdirs(o.dir, 0700, "--dir", err, errlen)) {
		/* the directory the user named, created (private) when missing */
		return EXIT_INVALID;
	}
	if (!o.cuda_helper) {
		ssize_t k = readlink("/proc/self/exe", helper, sizeof helper - 32);
		if (k > 0) {
			helper[k] = '\0';
			char *sl = strrchr(helper, '/');
			if (sl)
				strcpy(sl + 1, "tierplan-cuda");
			o.cuda_helper = helper;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	struct result rs[NTESTS];
	int n = 0, failed = 0;
	bool tty = isatty(fileno(log)), cuda_hung = false;
	for (int i = 0; i < NTESTS; i++) {
		if (list) {
			const char *p = strstr(list, tests[i].name);
			size_t l = strlen(tests[i].name);
			if (!p || (p != list && p[-1] != ',') || (p[l] && p[l] != ','))
				continue;
		}
		if (tty)
			fprintf(log, "calibrate: %-20s ...\r", tests[i].name);
		run_test(&o, i, &rs[n], &cuda_hung);
		struct result *r = &rs[n++];
		char v[32] = "";
		if (r->status == ST_OK) {
			double x = r->n ? median(r->samples, r->n) : r->bandwidth;
			if (!strcmp(r->unit, "B/s"))
				cfg_fmt_rate(x, v, sizeof v);
			else
				snprintf(v, sizeof v, "%.4g %s", x, r->unit);
		}
		bool said = r->status == ST_OK && r->reason[0]; /* what an OK test found */
		fprintf(log, "calibrate: %-20s %-7s %s%s%s%s\n", r->test,
			status_name((int)r->status), r->status == ST_OK ? v : r->reason,
			said ? " (" : "", said ? r->reason : "", said ? ")" : "");
		failed += r->status == ST_FAILED;
	}
	/* the simulator's prediction of the tiering kernel from the fitted links and GEMMs */
	struct cal_tiering tk;
	int wrc = write_profile(out, rs, n, &o, &tk, err, errlen);
	if (tk.predicted > 0)
		fprintf(log, "calibrate: tiering kernel: measured %.4g s per layer, simulator "
				"predicts %.4g s (%+.1f %%)\n",
			tk.measured, tk.predicted, 100 * (tk.predicted / tk.measured - 1));
	if (tk.bal_predicted > 0)
		fprintf(log, "calibrate: tiering kernel balanced at %d tokens: measured %.4g s per "
			     "layer, simulator predicts %.4g s (%+.1f %%)\n",
			tk.bal_tokens, tk.bal_measured, tk.bal_predicted,
			100 * (tk.bal_predicted / tk.bal_measured - 1));
	for (int i = 0; i < n; i++) {
		cJSON_Delete(rs[i].extra);
		cJSON_Delete(rs[i].device);
	}
	if (made_dir)
		rmdir(tmpdir);
	if (wrc)
		return wrc == CFG_OUT_REFUSED ? EXIT_INVALID : EXIT_SYSTEM;
	fprintf(log, "calibrate: profile written to %s (use it with --profile %s)\n", out, out);
	return failed ? EXIT_INFEASIBLE : EXIT_OK;
}
