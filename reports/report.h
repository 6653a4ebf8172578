/*
 * report — renderers of a plan result: text, JSON, CSV, Markdown.
 *
 * One result (struct rpt_plan: the resolved inputs and the sim_plan) and several renderers, as
 * fio's --output-format does. Text is for people: the resolved inputs first (defaults marked),
 * then the recommendation, the options table and the memory breakdown, in human units. JSON is
 * the contract of DESIGN.md: schema_version, tool_version, the resolved inputs, then results,
 * sizes in bytes, times in seconds, power in watts, money in USD, null where not applicable.
 * CSV is one row per option; Markdown is the text report's tables; HTML the same facts as
 * tables, for report.html.
 * Renderers only write to the stream they are given; they cannot fail except on I/O, which the
 * caller checks with ferror().
 */
#ifndef TIERPLAN_REPORT_H
#define TIERPLAN_REPORT_H

#include <stdio.h>

#include "../model/catalog.h"
#include "../model/file.h"
#include "../sim/plan.h"

/* Whether an option has a DRAM figure to report: the host-tier options, and a GPU-only one
 * whose activations go to DRAM (--activation-offload). */
static inline bool rpt_shows_dram(const struct sim_option *o)
{
	return o->kind == SIM_TIERED || o->peak_dram > 0;
}

/* What published runs of an option's kind measured over its predicted step time (the accuracy
 * record, configs/accuracy.json, that `tierplan validate --accuracy` writes): the validate
 * category whose runs are like it (host-tier policies: offload_throughput; GPU-only with
 * model parallelism: gpu_throughput, Megatron-Core and NeMo runs; data parallelism alone:
 * framework_throughput, FSDP, DeepSpeed and torchtune runs) into *category (unless NULL), and
 * its band into *b. false where the record has none (a configs directory without one). */
bool rpt_step_band(const struct sim_option *o, struct cfg_band *b, const char **category);
/* The same of GPU peaks (gpu_memory). */
bool rpt_memory_band(struct cfg_band *b);
/* The option's "ranges" into a JSON object: category, runs, the band, and the step, runtime
 * and GPU peak times it; null without a record or a time (plan's options, simulate, sweep's
 * JSON lines). Safe on several threads. */
struct cJSON;
void rpt_add_ranges(struct cJSON *j, const struct sim_option *o);

#define TIERPLAN_VERSION "0.1.0"
#define TIERPLAN_SCHEMA_VERSION 1

struct rpt_plan {
	const char *model_name, *model_path;
	const char *command; /* "plan" or "compare" */
	const struct sim_workload *w;
	const struct mdl_hw *hw;
	const struct sim_econ *econ;
	const struct sim_plan_req *req;
	const struct sim_plan *plan;
	bool recompute_auto, batch_default, tokens_default, batch_searched, loss_auto;
	bool max_gpus_given; /* plan --max-gpus: the inputs name the bound */
	bool wide; /* text: every column (--wide) */
	double epochs; /* --epochs: the tokens are that many passes over --dataset-tokens; else 0 */
};

/* One simulated configuration: the inputs, the result and the engine that ran it. */
struct eng;
struct rpt_sim {
	const char *model_name, *model_path;
	const struct sim_workload *w;
	const struct mdl_hw *hw;
	const struct sim_econ *econ;
	const struct sim_config *c;
	const struct sim_option *o;
	const struct eng *e;
};

void rpt_sim_text(FILE *fp, const struct rpt_sim *r);
/* Markdown: the text report's summary as a block, its resources as a table. */
void rpt_sim_md(FILE *fp, const struct rpt_sim *r);
void rpt_sim_json(FILE *fp, const struct rpt_sim *r);
/* CSV of simulated options, one row each as `sweep` writes them: RPT_SIM_CSV_COLS names the
 * columns, rpt_sim_csv_row writes them for o, or for a configuration that failed with `error`
 * (o NULL): fits false, the error, the rest empty (no line end either way). Times, peaks and
 * costs are empty for a run stopped where a GPU overflowed (sweep --unfit skip); the step's
 * range (rpt_step_band) empty without an accuracy record too. */
#define RPT_SIM_CSV_COLS                                                                           \
	"fits,error,policy,gpus,tp,pp,interleave,ep,cp,dp,zero,micro_batch,grad_accum,recompute,"  \
	"step_seconds,tokens_per_second,model_tflops_per_gpu,peak_gpu_bytes,peak_dram_bytes,"      \
	"peak_flash_bytes,peak_power_watts,energy_joules_per_step,flash_bytes_written_per_step,"   \
	"runtime_seconds,cost_total_usd,cost_cloud_usd,overflow,step_seconds_low,"                \
	"step_seconds_high"
void rpt_sim_csv_row(FILE *fp, const struct sim_option *o, const char *error);
/* s as one CSV field (RFC 4180: quoted where it holds a comma, quote or line end, its quotes
 * doubled). */
void rpt_csv_field(FILE *fp, const char *s);
void rpt_sim_csv(FILE *fp, const struct rpt_sim *r);
/* Chrome trace event JSON of the simulated micro-batches: one track per stream, counter tracks
 * per memory tier (bytes) and per node power (W), written through cfg_out ("-" is stdout, a
 * device or FIFO in place, a file through a temporary). 0 ok, else CFG_OUT_REFUSED or
 * CFG_OUT_IO with err naming the file. */
int rpt_sim_trace(const char *path, const struct rpt_sim *r, char *err, size_t errlen);

void rpt_plan_text(FILE *fp, const struct rpt_plan *r);
void rpt_plan_md(FILE *fp, const struct rpt_plan *r);
/* The HTML report's body sections: the recommendation first, the options and memory as tables
 * (the recommended rows marked), the inputs. */
void rpt_plan_html(FILE *fp, const struct rpt_plan *r);
/* s[0..n) with <, >, & and " escaped for HTML text and attributes. */
void rpt_html_escape(FILE *fp, const char *s, size_t n);
void rpt_plan_csv(FILE *fp, const struct rpt_plan *r);
void rpt_plan_json(FILE *fp, const struct rpt_plan *r);
/*
 * Report directories (report_dir.c). A file DIR/NAME written safely through model/file's
 * cfg_out (a temporary renamed on close; a symlink or special file refused); the directory
 * check (created if missing; a non-empty one needs the marker or force); gnuplot run in DIR on
 * SCRIPT with term 'svg' or 'png' into OUT (through a temporary); the shared script preamble.
 * Each returns 0, CFG_OUT_REFUSED (the path is not ours to write: exit 3) or CFG_OUT_IO (exit 4),
 * with err.
 */
struct rpt_file {
	FILE *fp;
	struct cfg_out out;
	const char *what; /* the option messages name ("--report", "--emit") */
};
int rpt_file_open(struct rpt_file *f, const char *dir, const char *name, const char *what,
		  char *err, size_t errlen);
int rpt_file_close(struct rpt_file *f, char *err, size_t errlen);
int rpt_dir_prepare(const char *dir, bool force, const char *what, char *err, size_t errlen);
int rpt_gnuplot(const char *dir, const char *script, const char *term, const char *out, char *err,
		size_t errlen);
/* A chart script's terminal (svg, or pngcairo by `term`), output, title and axis labels; texts
 * print as given (noenhanced: a category's or model's underscore is no subscript). */
void rpt_gnuplot_preamble(FILE *fp, const char *title, const char *xlabel, const char *ylabel);
/* Data never becomes gnuplot program text: a string as a single-quoted gnuplot string ('
 * doubled, control characters as spaces, so no backquote, system() or newline can act), and a
 * label as a double-quoted field of a .dat file (" and control characters replaced). */
void rpt_gnuplot_string(FILE *fp, const char *s);
void rpt_dat_string(FILE *fp, const char *s);
/* Writes s as a JSON string, quoted and escaped (RFC 8259). */
void rpt_json_string(FILE *fp, const char *s);

/* --report DIR: report.md, report.html (SVG charts inline), PNG charts, the .dat series and .gp
 * scripts, drawn by gnuplot. DIR is created; a non-empty DIR that holds no tierplan report needs
 * force. Files are written to temporary names and renamed. 0 ok, else CFG_OUT_REFUSED or
 * CFG_OUT_IO with err. */
/* plan --emit DIR: ds_config.json or Megatron arguments, launch.sh and README.md for option idx
 * (emit.c); the names written go to files ("README.md, launch.sh, ..."), followed by a warning
 * where the files run the option in more GPU memory than the GPU has. 0 or a CFG_OUT_* code
 * with err. */
int rpt_plan_emit(const char *dir, bool force, const struct rpt_plan *r, int idx, char *files,
		  size_t nfiles, char *err, size_t errlen);
int rpt_plan_report(const char *dir, bool force, const struct rpt_plan *r, char *err,
		    size_t errlen);

#endif
