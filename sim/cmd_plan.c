/* cmd_plan — `tierplan plan`: resolve the inputs, run the sizing search, render. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../reports/report.h"
#include "catalog.h"
#include "cli.h"
#include "opts.h"
#include "plan.h"

static void help(FILE *fp)
{
	fprintf(fp, "usage: tierplan plan --model M --seq S [job options] [hardware options]\n\n"
		    "Sizes a fine-tuning job: the fewest GPUs that fit it GPU-only, and the fewest\n"
		    "when model states live in host DRAM and flash instead, with step time, runtime,\n"
		    "peak power, energy, cost and flash wear for each.\n\noptions:\n");
	tp_opts_help(CMD_PLAN, fp);
	fprintf(fp, "\nexample: tierplan plan --model 70b --seq 4096 --format json\n");
}

/* "pm1743:4" -> name and count; 0 ok, -1 + err. */
static int parse_flash(const char *arg, char *name, size_t n, uint32_t *count, char *err,
		       size_t errlen)
{
	const char *colon = strrchr(arg, ':');
	char *end;
	long c = 1;

	if (colon && !strchr(colon, '/')) {
		c = strtol(colon + 1, &end, 10);
		if (end == colon + 1 || *end || c < 1 || c > 1024) {
			snprintf(err, errlen, "--flash: drive count in '%s' must be 1 to 1024", arg);
			return -1;
		}
		snprintf(name, n, "%.*s", (int)(colon - arg), arg);
	} else {
		snprintf(name, n, "%s", arg);
	}
	*count = (uint32_t)c;
	return 0;
}

int cmd_plan(int argc, char **argv)
{
	struct tp_opts o;
	struct sim_workload *w = NULL;
	struct sim_hw hw;
	struct sim_econ econ;
	struct sim_plan *p = NULL;
	struct sim_plan_req req;
	char err[512], path[4096], name[96], flash_name[256];
	int rc;

	rc = tp_opts_parse(CMD_PLAN, argc, argv, 2, &o, err, sizeof err);
	if (rc < 0)
		return cli_fail(rc == -2 ? EXIT_USAGE : EXIT_INVALID, "plan", err);
	if (o.help) {
		help(stdout);
		return EXIT_OK;
	}
	if (strcmp(o.format, "text") && strcmp(o.format, "json") && strcmp(o.format, "csv") &&
	    strcmp(o.format, "md"))
		return cli_fail(EXIT_INVALID, "plan",
				"--format: unknown format (allowed: text, json, csv, md)");

	w = calloc(1, sizeof *w);
	p = calloc(1, sizeof *p);
	if (!w || !p) {
		rc = cli_fail(EXIT_SYSTEM, "plan", "out of memory");
		goto out;
	}
	/* model */
	if (cfg_model_resolve(o.model, path, sizeof path, name, sizeof name, err, sizeof err) < 0 ||
	    mdl_arch_load(path, &w->arch, err, sizeof err) < 0) {
		rc = cli_fail(EXIT_INVALID, "plan", err);
		goto out;
	}
	/* job */
	w->job = (struct mdl_job){
		.method = o.method,
		.lora_rank = (uint32_t)o.lora_rank,
		.lora_targets = o.lora_targets,
		.precision = o.precision,
		.optimizer = o.optimizer,
		.recompute = o.recompute < 0 ? MDL_RC_FULL : o.recompute,
		.attention = o.attention,
		.seq = o.seq,
		.micro_batch = o.batch,
	};
	if (o.seq > w->arch.positions)
		fprintf(stderr, "tierplan plan: warning: --seq %llu exceeds the model's %llu positions\n",
			(unsigned long long)o.seq, (unsigned long long)w->arch.positions);
	if (tp_opts_given(&o, "grad-accum") && tp_opts_given(&o, "global-batch")) {
		rc = cli_fail(EXIT_USAGE, "plan", "give --grad-accum or --global-batch, not both");
		goto out;
	}
	w->grad_accum = tp_opts_given(&o, "grad-accum") ? o.grad_accum : 0;
	w->global_batch = o.global_batch;
	w->tokens = o.tokens;
	if (tp_opts_given(&o, "epochs") != tp_opts_given(&o, "dataset-tokens")) {
		rc = cli_fail(EXIT_USAGE, "plan", "--epochs and --dataset-tokens go together");
		goto out;
	}
	if (tp_opts_given(&o, "epochs")) {
		if (tp_opts_given(&o, "tokens")) {
			rc = cli_fail(EXIT_USAGE, "plan",
				      "give --tokens or --epochs with --dataset-tokens, not both");
			goto out;
		}
		w->tokens = o.epochs * o.dataset_tokens;
		if (w->tokens < 1) {
			rc = cli_fail(EXIT_INVALID, "plan",
				      "--epochs x --dataset-tokens must be at least 1 token");
			goto out;
		}
	}
	/* hardware */
	memset(&hw, 0, sizeof hw);
	if (cfg_gpu_get(o.gpu, &hw.gpu, err, sizeof err) < 0 ||
	    cfg_host_get(o.host, &hw.host, err, sizeof err) < 0 ||
	    parse_flash(o.flash, flash_name, sizeof flash_name, &hw.flash_count, err,
			sizeof err) < 0 ||
	    cfg_flash_get(flash_name, &hw.flash, err, sizeof err) < 0) {
		rc = cli_fail(EXIT_INVALID, "plan", err);
		goto out;
	}
	hw.gpus_per_node = o.gpus_per_node ? (uint32_t)o.gpus_per_node : (uint32_t)hw.host.gpu_slots;
	hw.dram = o.dram > 0 ? o.dram : hw.host.dram;
	if (hw.dram > hw.host.dram_max) {
		snprintf(err, sizeof err, "--dram: %.0f GiB is more than host '%s' takes (%.0f GiB)",
			 hw.dram / 1073741824.0, hw.host.name, hw.host.dram_max / 1073741824.0);
		rc = cli_fail(EXIT_INVALID, "plan", err);
		goto out;
	}
	if (hw.flash_count > hw.host.flash_bays) {
		snprintf(err, sizeof err, "--flash: %u drives, but host '%s' has %.0f bays",
			 hw.flash_count, hw.host.name, hw.host.flash_bays);
		rc = cli_fail(EXIT_INVALID, "plan", err);
		goto out;
	}
	econ = (struct sim_econ){o.amortize_years, o.pue, o.usd_per_kwh};
	req = (struct sim_plan_req){(uint32_t)o.max_gpus, o.recompute >= 0};

	if (sim_plan_run(w, &hw, &econ, &req, p, err, sizeof err) < 0) {
		rc = cli_fail(EXIT_INVALID, "plan", err);
		goto out;
	}
	struct rpt_plan r = {name,
			     path,
			     w,
			     &hw,
			     &econ,
			     p,
			     o.recompute < 0,
			     !tp_opts_given(&o, "global-batch") && !tp_opts_given(&o, "grad-accum"),
			     !tp_opts_given(&o, "tokens") && !tp_opts_given(&o, "epochs")};
	if (strcmp(o.format, "json") == 0)
		rpt_plan_json(stdout, &r);
	else if (strcmp(o.format, "csv") == 0)
		rpt_plan_csv(stdout, &r);
	else if (strcmp(o.format, "md") == 0)
		rpt_plan_md(stdout, &r);
	else
		rpt_plan_text(stdout, &r);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		rc = cli_fail(EXIT_SYSTEM, "plan", "cannot write the report to standard output");
		goto out;
	}
	rc = p->rec_gpu_only < 0 && p->rec_tiered < 0 ? EXIT_INFEASIBLE : EXIT_OK;
out:
	free(w);
	free(p);
	return rc;
}
