/*
 * report_dir — `--report DIR` for plan and compare: report.md, a self-contained report.html
 * (the text report and the charts as inline SVG), PNG charts beside them, and the .dat series
 * and .gp gnuplot scripts so users can re-plot.
 *
 * Charts (titles, axis labels, units): GPU memory per option (stacked bars by state), each
 * memory tier's occupancy over one simulated step of the recommended option (the simulator is
 * run again for it), owned cost against runtime with the options on the Pareto front, and peak
 * power per option at the node and the facility (x PUE).
 * Safety: DIR is created if missing; an existing non-empty DIR must already hold a tierplan
 * report (the .tierplan-report marker) unless force. Every file is written to a temporary name
 * and renamed, so an interrupted run leaves no half-written file. gnuplot runs as a child
 * process in DIR; its failure is an error naming the script.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../sim/engine.h"
#include "report.h"

#define MARKER ".tierplan-report"

int rpt_file_open(struct rpt_file *f, const char *dir, const char *name, const char *what,
		  char *err, size_t errlen)
{
	char path[4200];

	f->what = what;
	if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
		snprintf(err, errlen, "%s: path too long", what);
		return CFG_OUT_REFUSED;
	}
	int rc = cfg_out_open(&f->out, path, what, err, errlen);
	f->fp = f->out.fp;
	return rc;
}

int rpt_file_close(struct rpt_file *f, char *err, size_t errlen)
{
	f->fp = NULL;
	return cfg_out_close(&f->out, f->what, err, errlen);
}

/* DIR exists (created here) and is ours to write into. */
int rpt_dir_prepare(const char *dir, bool force, const char *what, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(dir, &st) != 0) {
		if (cfg_mkdirs(dir, 0777, what, err, errlen))
			return CFG_OUT_REFUSED;
	} else if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: '%s' exists and is not a directory", what, dir);
		return CFG_OUT_REFUSED;
	} else {
		char marker[4200];
		snprintf(marker, sizeof marker, "%s/%s", dir, MARKER);
		DIR *d = opendir(dir);
		struct dirent *de;
		bool empty = true;
		if (!d) {
			snprintf(err, errlen, "%s: cannot read directory '%s': %s", what, dir,
				 strerror(errno));
			return CFG_OUT_IO;
		}
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				empty = false;
		closedir(d);
		if (!empty && lstat(marker, &st) != 0 && !force) {
			snprintf(err, errlen, "%s: '%s' is not empty and holds no tierplan report "
					      "(pass --force to write into it)",
				 what, dir);
			return CFG_OUT_REFUSED;
		}
	}
	struct rpt_file m;
	int rc = rpt_file_open(&m, dir, MARKER, what, err, errlen);
	if (rc)
		return rc;
	fprintf(m.fp, "tierplan %s report directory\n", TIERPLAN_VERSION);
	return rpt_file_close(&m, err, errlen);
}

void rpt_gnuplot_string(FILE *fp, const char *s)
{
	fputc('\'', fp);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\'')
			fputs("''", fp); /* the one escape of a single-quoted gnuplot string */
		else if (c < 0x20 || c == 0x7f)
			fputc(' ', fp); /* a newline would end the command */
		else
			fputc(c, fp);
	}
	fputc('\'', fp);
}

/*
 * Runs gnuplot on a script in DIR for one terminal. The chart goes to a temporary of ours
 * (mkstemp, so never through a planted name), renamed over OUT when gnuplot succeeds: an
 * interrupted or failed run leaves no empty chart. stdio is flushed before the fork so the
 * child cannot write our buffers twice.
 */
int rpt_gnuplot(const char *dir, const char *script, const char *term, const char *outname,
		char *err, size_t errlen)
{
	char tmp[4200], path[4200], *expr = NULL;
	size_t exprlen = 0;
	int status = 0, rc = 0;

	snprintf(path, sizeof path, "%s/%s", dir, outname);
	if ((rc = cfg_out_replaceable(path, "--report", err, errlen)))
		return rc;
	if (snprintf(tmp, sizeof tmp, "%s/.%s.XXXXXX", dir, outname) >= (int)sizeof tmp) {
		snprintf(err, errlen, "--report: path too long");
		return CFG_OUT_REFUSED;
	}
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "--report: cannot write in '%s': %s", dir, strerror(errno));
		return CFG_OUT_IO;
	}
	if (fchmod(fd, (mode_t)cfg_out_mode(path)) != 0) {
		snprintf(err, errlen, "--report: cannot write '%s': %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return CFG_OUT_IO;
	}
	close(fd);
	FILE *e = open_memstream(&expr, &exprlen);
	if (!e) {
		unlink(tmp);
		snprintf(err, errlen, "out of memory");
		return CFG_OUT_IO;
	}
	fputs("term=", e);
	rpt_gnuplot_string(e, term);
	fputs("; out=", e);
	rpt_gnuplot_string(e, strrchr(tmp, '/') + 1);
	fclose(e);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "--report: cannot start gnuplot: %s", strerror(errno));
		rc = CFG_OUT_IO;
		goto out;
	}
	if (pid == 0) {
		if (chdir(dir) != 0)
			_exit(126);
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, 1);
		execlp("gnuplot", "gnuplot", "-e", expr, script, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(err, errlen, "--report: gnuplot failed on %s/%s (exit %d%s)", dir, script,
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			 WIFEXITED(status) && WEXITSTATUS(status) == 127 ? ": gnuplot not installed, "
									  "apt-get install gnuplot-nox"
									: "");
		rc = CFG_OUT_IO;
		goto out;
	}
	if (rename(tmp, path) != 0) {
		snprintf(err, errlen, "--report: cannot write '%s': %s", path, strerror(errno));
		rc = CFG_OUT_IO;
	}
out:
	if (rc)
		unlink(tmp);
	free(expr);
	return rc;
}

/* The terminal preamble every script shares: svg or png by the caller's variable. */
void rpt_gnuplot_preamble(FILE *fp, const char *title, const char *xlabel, const char *ylabel)
{
	fprintf(fp, "# drawn by tierplan %s; re-plot: gnuplot -e \"term='svg'; out='x.svg'\" "
		    "this.gp\n"
		    "if (!exists('term')) term = 'svg'\n"
		    "if (!exists('out')) out = 'chart.svg'\n"
		    "if (term eq 'svg') set terminal svg size 960,540 dynamic noenhanced "
		    "font 'sans,11'; else set terminal pngcairo size 960,540 noenhanced "
		    "font 'sans,10'\n"
		    "set output out\nset title ",
		TIERPLAN_VERSION);
	rpt_gnuplot_string(fp, title);
	fputs("\nset xlabel ", fp);
	rpt_gnuplot_string(fp, xlabel);
	fputs("\nset ylabel ", fp);
	rpt_gnuplot_string(fp, ylabel);
	fputs("\nset grid ytics\nset key outside right top\n", fp);
}

void rpt_dat_string(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		fputc(c == '"' ? '\'' : c < 0x20 || c == 0x7f ? ' ' : c, fp);
	}
	fputc('"', fp);
}

static const char *kind_name(const struct sim_option *o, char *buf, size_t n)
{
	if (o->kind == SIM_GPU_ONLY)
		return "gpu-only";
	return sim_option_policy(o, buf, n);
}

/* GPU memory per option, stacked by state, with the GPU's capacity as a line; bars beyond
 * twice the capacity (options that do not fit by far) are clipped, and the title says so, so
 * they do not squash the rest. Options of one kind and GPU count with the same breakdown (the
 * tiered ones that differ only in DRAM and drives) share one bar labelled with all of them. */
/* Two options draw the same memory bar: one policy, one GPU count, one breakdown. */
static bool same_bar(const struct sim_option *a, const struct sim_option *b)
{
	return a->kind == b->kind && a->gpus == b->gpus && !strcmp(a->policy, b->policy) &&
	       a->params_on_gpu == b->params_on_gpu && a->twin_gpu == b->twin_gpu &&
	       !memcmp(&a->gpu_mem, &b->gpu_mem, sizeof a->gpu_mem);
}

static int chart_memory(const char *dir, const struct sim_plan *p, double capacity, char *err,
			size_t errlen)
{
	struct rpt_file d, g;
	int rc, clipped = 0;
	double cap = capacity / 1073741824.0;
	if ((rc = rpt_file_open(&d, dir, "memory.dat", "--report", err, errlen)))
		return rc;
	fprintf(d.fp, "# option label weights gradients optimizer activations other (GiB per GPU)\n");
	for (int i = 0; i < p->noptions; i++) {
		const struct sim_option *o = &p->options[i];
		const struct mdl_gpu_memory *m = &o->gpu_mem;
		bool seen = false;
		for (int j = 0; j < i && !seen; j++)
			seen = same_bar(&p->options[j], o);
		if (seen)
			continue;
		char label[96], kn[SIM_POLICY_LABEL];
		int k = snprintf(label, sizeof label, "#%d", i);
		for (int j = i + 1; j < p->noptions && k < (int)sizeof label - 16; j++)
			if (same_bar(&p->options[j], o))
				k += snprintf(label + k, sizeof label - (size_t)k, ",%d", j);
		fprintf(d.fp, "%d \"%s %s %uGPU\" %.3f %.3f %.3f %.3f %.3f\n", i, label,
			kind_name(o, kn, sizeof kn), o->gpus, m->weights / 1073741824.0,
			m->gradients / 1073741824.0,
			m->optimizer / 1073741824.0, m->activations / 1073741824.0,
			m->other / 1073741824.0);
		clipped += m->total > 2 * capacity;
	}
	if ((rc = rpt_file_close(&d, err, errlen)) || (rc = rpt_file_open(&g, dir, "memory.gp", "--report", err, errlen)))
		return rc;
	char title[160];
	snprintf(title, sizeof title, "GPU memory per option at its peak%s",
		 clipped ? " (bars above twice the capacity clipped: those options do not fit)" : "");
	rpt_gnuplot_preamble(g.fp, title, "option", "GiB per GPU");
	if (clipped)
		fprintf(g.fp, "set yrange [0:%.3f]\n", 2 * cap);
	/* the capacity as a dashed line across the bars */
	fprintf(g.fp, "set arrow from graph 0, first %.3f to graph 1, first %.3f nohead dt 2 lw 2 "
		      "lc rgb '#c00000' front\nset label 'GPU capacity %.1f GiB' at graph 0.01, first "
		      "%.3f offset 0,0.6 tc rgb '#c00000' front\n",
		cap, cap, cap, cap);
	fprintf(g.fp, "set style data histograms\nset style histogram rowstacked\n"
		      "set style fill solid 0.85 border -1\nset boxwidth 0.7\n"
		      "set xtics rotate by -30 left\n"
		      "plot 'memory.dat' using 3:xtic(2) title 'weights', '' using 4 title "
		      "'gradients', '' using 5 title 'optimizer', '' using 6 title 'activations', "
		      "'' using 7 title 'other'\n");
	return rpt_file_close(&g, err, errlen);
}

/* Whether fitting option i is on the cost-runtime front: no other fitting option is as cheap
 * and as fast and better in one of the two. */
static bool cost_runtime_front(const struct sim_plan *p, int i)
{
	const struct sim_option *a = &p->options[i];
	for (int j = 0; j < p->noptions; j++) {
		const struct sim_option *b = &p->options[j];
		if (j != i && b->fits && b->cost_total <= a->cost_total &&
		    b->runtime_seconds <= a->runtime_seconds &&
		    (b->cost_total < a->cost_total || b->runtime_seconds < a->runtime_seconds))
			return false;
	}
	return true;
}

/* Owned cost against runtime, every fitting option; only the cost-runtime front and the
 * recommendations are labelled, so the labels stay readable. */
static int chart_cost(const char *dir, const struct sim_plan *p, bool front, char *err,
		      size_t errlen)
{
	struct rpt_file d, g;
	int rc;
	if ((rc = rpt_file_open(&d, dir, "cost_runtime.dat", "--report", err, errlen)))
		return rc;
	fprintf(d.fp, "# option runtime_hours owned_usd gpus kind label runtime_low runtime_high "
		      "(block 0 gpu-only, 1 host tiers; label only on the cost-runtime front and "
		      "the recommendations; low and high: what 90 %% of published runs of its "
		      "kind measured, the runtime itself without an accuracy record)\n");
	int n[2] = {0, 0}; /* fitting options of each block: an empty one is left out of the plot */
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < p->noptions; i++) {
			const struct sim_option *o = &p->options[i];
			if ((int)o->kind != k || !o->fits)
				continue;
			n[k]++;
			bool label = cost_runtime_front(p, i) || i == p->rec_best ||
				     i == p->rec_gpu_only || i == p->rec_tiered;
			/* the kind quoted: "zero3-offload (opt)" is one column, not two */
			char kn[SIM_POLICY_LABEL];
			fprintf(d.fp, "%d %.6g %.6g %u ", i, o->runtime_seconds / 3600,
				o->cost_total, o->gpus);
			rpt_dat_string(d.fp, kind_name(o, kn, sizeof kn));
			fputs(" \"", d.fp);
			if (label)
				fprintf(d.fp, "#%d %uGPU", i, o->gpus);
			struct cfg_band b = {1, 1, 0}; /* kept where there is no record */
			rpt_step_band(o, &b, NULL);
			fprintf(d.fp, "\" %.6g %.6g\n", o->runtime_seconds * b.lo / 3600,
				o->runtime_seconds * b.hi / 3600);
		}
		fprintf(d.fp, "\n\n");
	}
	if ((rc = rpt_file_close(&d, err, errlen)) ||
	    (rc = rpt_file_open(&g, dir, "cost_runtime.gp", "--report", err, errlen)))
		return rc;
	rpt_gnuplot_preamble(g.fp,
			     front ? "Owned cost against runtime (labelled: the cost-runtime front and "
				     "the recommendations)"
				   : "Owned cost against runtime (the best option at each GPU count)",
		 "job runtime (hours)", "owned cost (USD)");
	/* each block with points, its points and its labels: gnuplot skips the blank lines of an
	 * empty block, so a block's index counts the non-empty ones before it (GPU-only options
	 * that all miss would otherwise put the tiers under the GPU-only title), and an empty
	 * block is left out (gnuplot warns on it) */
	static const char *const draw[3][2] = {
		{"using 2:3 with linespoints pt 7 ps 1.5 title 'GPU-only'",
		 "using 2:3:6 with labels offset 1,1 notitle"},
		{"using 2:3 with points pt 5 ps 1.5 title 'DRAM/flash tiers'",
		 "using 2:3:6 with labels offset 1,-1 notitle"},
		{"using 2:3:7:8 with xerrorbars lc 'gray' pt -1 title 'runtime as 90 % of "
		 "published runs measured'",
		 "using 2:3:7:8 with xerrorbars lc 'gray' pt -1 notitle"}};
	fprintf(g.fp, "set logscale x\n");
	if (!n[0] && !n[1]) {
		fprintf(g.fp, "set label 'no option fits' at graph 0.5, 0.5 center\n"
			      "unset logscale x\nplot [0:1] [0:1] NaN notitle\n");
	} else {
		const char *sep = "plot ";
		/* the runtime ranges first (under the points; the first in the key), then the
		 * points, then labels */
		for (int part = 0, ranges = 0; part < 3; part++)
			for (int k = 0; k < 2; k++)
				if (n[k]) {
					fprintf(g.fp, "%s'cost_runtime.dat' index %d %s", sep,
						k && n[0] ? 1 : 0,
						part ? draw[k][part - 1] : draw[2][ranges++ > 0]);
					sep = ", ";
				}
		fputc('\n', g.fp);
	}
	return rpt_file_close(&g, err, errlen);
}

static int chart_power(const char *dir, const struct sim_plan *p, char *err, size_t errlen)
{
	struct rpt_file d, g;
	int rc;
	if ((rc = rpt_file_open(&d, dir, "power.dat", "--report", err, errlen)))
		return rc;
	fprintf(d.fp, "# option label peak_node_kw peak_facility_kw\n");
	for (int i = 0; i < p->noptions; i++) {
		char kn[SIM_POLICY_LABEL];
		fprintf(d.fp, "%d \"#%d %s %uGPU\" %.4f %.4f\n", i, i,
			kind_name(&p->options[i], kn, sizeof kn), p->options[i].gpus,
			p->options[i].peak_power_watts / 1e3,
			p->options[i].peak_power_facility_watts / 1e3);
	}
	if ((rc = rpt_file_close(&d, err, errlen)) || (rc = rpt_file_open(&g, dir, "power.gp", "--report", err, errlen)))
		return rc;
	rpt_gnuplot_preamble(g.fp, "Peak power per option", "option", "kW");
	fprintf(g.fp, "set style data histograms\nset style histogram clustered gap 1\n"
		      "set style fill solid 0.85 border -1\nset xtics rotate by -30 left\n"
		      "plot 'power.dat' using 3:xtic(2) title 'IT (nodes)', '' using 4 title "
		      "'facility (x PUE)'\n");
	return rpt_file_close(&g, err, errlen);
}

/* Occupancy of each tier over one simulated step of option o (re-simulated here). */
static int chart_occupancy(const char *dir, const struct rpt_plan *r, const struct sim_option *o,
			   char *err, size_t errlen)
{
	struct sim_workload w = *r->w;
	struct mdl_hw hw = *r->hw;
	struct sim_option res;
	struct eng *e = eng_new();
	struct rpt_file d, g;
	int rc = CFG_OUT_IO;

	if (!e) {
		snprintf(err, errlen, "out of memory");
		return CFG_OUT_IO;
	}
	struct sim_config c;
	sim_plan_rerun(r->req, o, &w, &hw, &c);
	if (sim_run(e, &w, &hw, r->econ, &c, &res, err, errlen) || (rc = rpt_file_open(&d, dir, "occupancy.dat",
									     "--report", err, errlen)))
		goto out;
	fprintf(d.fp, "# one block per pool: time_s GiB (the pool's bytes for all GPUs it stands "
		      "for); %s, the simulated micro-batches only, without the step's teardown\n",
		res.name);
	/* GPU pools on the left axis; host pools (DRAM, flash) on the right one when they dwarf
	 * the GPU's, so both stay readable */
	int np = eng_npools(e), shown = 0;
	double gpu_peak = 0, host_peak = 0;
	for (int i = 0; i < np; i++) {
		const struct eng_pool *pl = eng_pool_at(e, i);
		double v = (double)pl->peak * pl->scale;
		if (strncmp(pl->name, "gpu", 3) == 0)
			gpu_peak = fmax(gpu_peak, v);
		else
			host_peak = fmax(host_peak, v);
	}
	bool y2 = host_peak > 4 * gpu_peak && gpu_peak > 0;
	for (int i = 0; i < np; i++) {
		const struct eng_pool *pl = eng_pool_at(e, i);
		if (pl->peak <= 0)
			continue;
		fprintf(d.fp, "# %s\n", pl->name);
		/* the last sample is the end of the step freeing what stayed resident: drawn as the
		 * level held until then, not as a drop to zero */
		uint32_t n = pl->hist_n;
		bool teardown = n > 1 && pl->hist[n - 1].value == 0;
		for (uint32_t h = 0; h < n; h++) {
			uint32_t v = teardown && h == n - 1 ? h - 1 : h;
			fprintf(d.fp, "%.6f %.4f\n", pl->hist[h].t_ns * 1e-9,
				pl->hist[v].value * pl->scale / 1073741824.0);
		}
		fprintf(d.fp, "\n\n");
		shown++;
	}
	if ((rc = rpt_file_close(&d, err, errlen)) || (rc = rpt_file_open(&g, dir, "occupancy.gp", "--report", err, errlen)))
		goto out;
	char title[256];
	snprintf(title, sizeof title,
		 "Memory tiers, simulated part of a step (%llu of %llu micro-batches): %s",
		 (unsigned long long)res.micro_simulated, (unsigned long long)res.grad_accum,
		 res.name);
	rpt_gnuplot_preamble(g.fp, title, "time (s)", y2 ? "GPU GiB" : "GiB");
	if (y2)
		fprintf(g.fp, "set y2label 'host GiB (DRAM, flash)'\nset y2tics\nset ytics nomirror\n"
			      "set yrange [0:*]\nset y2range [0:*]\n");
	fprintf(g.fp, "plot ");
	for (int i = 0, k = 0; i < np; i++) {
		const struct eng_pool *pl = eng_pool_at(e, i);
		if (pl->peak <= 0)
			continue;
		bool host = strncmp(pl->name, "gpu", 3) != 0;
		fprintf(g.fp, "%s'occupancy.dat' index %d using 1:2%s with steps lw 2 title '%s%s'",
			k ? ", " : "", k, y2 && host ? " axes x1y2" : "", pl->name,
			y2 && host ? " (right axis)" : "");
		k++;
	}
	fprintf(g.fp, "%s\n", shown ? "" : "0 notitle");
	rc = rpt_file_close(&g, err, errlen);
out:
	eng_free(e);
	return rc;
}

/* Copies an SVG file into the HTML stream, dropping its XML prologue. */
static void inline_svg(FILE *html, const char *dir, const char *name)
{
	char path[4200], line[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *fp = fopen(path, "r");
	if (!fp)
		return;
	while (fgets(line, sizeof line, fp))
		if (strncmp(line, "<?xml", 5) && strncmp(line, "<!DOCTYPE", 9) &&
		    !strstr(line, "svg11.dtd"))
			fputs(line, html);
	fclose(fp);
}

int rpt_plan_report(const char *dir, bool force, const struct rpt_plan *r, char *err,
		    size_t errlen)
{
	static const char *const charts[][2] = {
	    {"memory", "GPU memory per option"},
	    {"occupancy", "Memory tiers over one step"},
	    {"cost_runtime", "Cost against runtime (gray: the runtime as 90 % of published runs of "
			     "the kind measured it)"},
	    {"power", "Peak power"}};
	const struct sim_plan *p = r->plan;
	int n = 0, rc;

	if ((rc = rpt_dir_prepare(dir, force, "--report", err, errlen)) || (rc = chart_memory(dir, p, r->hw->gpu.memory, err, errlen)) ||
	    (rc = chart_cost(dir, p, !r->req->counts, err, errlen)) ||
	    (rc = chart_power(dir, p, err, errlen)))
		return rc;
	int show = p->rec_tiered >= 0 ? p->rec_tiered : p->rec_best;
	bool occ = show >= 0;
	if (occ && (rc = chart_occupancy(dir, r, &p->options[show], err, errlen)))
		return rc;
	for (int i = 0; i < 4; i++) {
		char gp[64], svg[64], png[64];
		if (i == 1 && !occ)
			continue;
		snprintf(gp, sizeof gp, "%s.gp", charts[i][0]);
		snprintf(svg, sizeof svg, "%s.svg", charts[i][0]);
		snprintf(png, sizeof png, "%s.png", charts[i][0]);
		if ((rc = rpt_gnuplot(dir, gp, "svg", svg, err, errlen)) ||
		    (rc = rpt_gnuplot(dir, gp, "png", png, err, errlen)))
			return rc;
		n++;
	}

	struct rpt_file md, html;
	if ((rc = rpt_file_open(&md, dir, "report.md", "--report", err, errlen)))
		return rc;
	rpt_plan_md(md.fp, r);
	fprintf(md.fp, "\n## Charts\n\n");
	for (int i = 0; i < 4; i++)
		if (i != 1 || occ)
			fprintf(md.fp, "![%s](%s.png)\n\n", charts[i][1], charts[i][0]);
	fprintf(md.fp, "Data behind the charts: `*.dat`; gnuplot scripts: `*.gp` "
		       "(`gnuplot -e \"term='svg'; out='memory.svg'\" memory.gp`).\n");
	if ((rc = rpt_file_close(&md, err, errlen)) ||
	    (rc = rpt_file_open(&html, dir, "report.html", "--report", err, errlen)))
		return rc;
	size_t nlen = strlen(r->model_name);
	fprintf(html.fp, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>tierplan %s: ",
		r->command);
	rpt_html_escape(html.fp, r->model_name, nlen);
	fprintf(html.fp,
		"</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:1200px}"
		"pre{font-size:12px;overflow-x:auto;background:#f6f6f6;padding:1em}"
		".scroll{overflow-x:auto}table{border-collapse:collapse;font-size:12px}"
		"th,td{border:1px solid #ccc;padding:2px 6px;text-align:right;white-space:nowrap}"
		"tr.recommended{background:#e8f4e8;font-weight:bold}"
		"figure{margin:1em 0}svg{max-width:100%%;height:auto}</style></head><body>\n"
		"<h1>tierplan %s: ",
		r->command);
	rpt_html_escape(html.fp, r->model_name, nlen);
	fprintf(html.fp, "</h1>\n");
	rpt_plan_html(html.fp, r);
	fprintf(html.fp, "<section id=\"charts\"><h2>Charts</h2>\n");
	for (int i = 0; i < 4; i++) {
		char svg[64];
		if (i == 1 && !occ)
			continue;
		snprintf(svg, sizeof svg, "%s.svg", charts[i][0]);
		fprintf(html.fp, "<figure class=\"chart\" id=\"%s\">\n", charts[i][0]);
		inline_svg(html.fp, dir, svg);
		fprintf(html.fp, "<figcaption>%s (data %s.dat, script %s.gp)</figcaption></figure>\n",
			charts[i][1], charts[i][0], charts[i][0]);
	}
	fprintf(html.fp, "<p>%d charts; re-plot any with gnuplot: <code>gnuplot -e "
			 "\"term='svg'; out='memory.svg'\" memory.gp</code>.</p>\n</section>\n"
			 "</body></html>\n",
		n);
	return rpt_file_close(&html, err, errlen);
}
