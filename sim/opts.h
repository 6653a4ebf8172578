/*
 * opts — the command-line options, as one descriptor table.
 *
 * Each option has a name, a type (string, count, size, real, enum, flag), the offset of its
 * destination in struct tp_opts, a range, a default as the user would type it, a unit and a
 * help line; the commands it belongs to are a bit mask. One parser walks argv against the table,
 * then one resolver turns every value (given or default) into its destination, checking units
 * and ranges; `--help` text comes from the same table. Unknown options get a "did you mean".
 * Errors: -2 for usage (unknown flag, missing value or required option), -3 for a bad value;
 * both with a one-line message naming the flag and the allowed range.
 */
#ifndef TIERPLAN_OPTS_H
#define TIERPLAN_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dsconfig.h"

/*
 * Status codes. The resolvers here, sim_run's callers in validate/ and the commands return them,
 * and bin/tierplan exits with them (DESIGN.md): 0 ok, 1 infeasible or a check failed, 2 usage,
 * 3 invalid input file or value, 4 system error.
 */
enum { EXIT_OK = 0, EXIT_INFEASIBLE = 1, EXIT_USAGE = 2, EXIT_INVALID = 3, EXIT_SYSTEM = 4 };

enum {
	CMD_PLAN = 1 << 0,
	CMD_MODELS = 1 << 1,
	CMD_HARDWARE = 1 << 2,
	CMD_SIMULATE = 1 << 3,
	CMD_COMPARE = 1 << 4,
};

/* The most tokens a job may train on, however given (--tokens, or --epochs x --dataset-tokens):
 * 10^16, a thousand times the largest pre-training runs published (Llama 3: 15.6 T tokens). */
#define TP_MAX_TOKENS 1e16
/* The drive --flash names by default (its count: four) */
#define TP_FLASH_DEFAULT "pm1743"

struct tp_opts {
	const char *model, *gpu, *host, *flash, *format, *policy, *trace, *prices;
	const char *match; /* models --match: the text a listed model must hold */
	const char *objective, *report, *gpu_list, *profile, *emit;
	uint64_t option; /* plan --emit: the option's index (--option), else the recommendation */
	const char *sequence_parallel; /* yes | no | auto */
	const char *overlap_grad_reduce; /* yes | no */
	const char *overlap_param_gather; /* yes | no */
	const char *tp_comm_overlap;     /* yes | no */
	const char *ep_overlap;          /* yes | no */
	const char *shared_expert_overlap; /* yes | no */
	const char *moe_dispatcher;      /* alltoall | deepep | hybridep */
	uint64_t moe_dispatcher_sms;     /* SMs of a flex dispatcher's kernels */
	const char *optimizer_in_backward; /* yes | no */
	const char *activation_offload;    /* yes | no */
	const char *offload_param;         /* yes | no */
	const char *model_parallel;        /* yes | no: plan's layouts beyond data parallelism */
	const char *clip_grad;             /* yes | no */
	const char *foreach_optimizer;     /* yes | no */
	const char *swap_pipeline;         /* none | read | write | both */
	const char *weights_up;            /* after | in-step */
	const char *graph_freed;           /* backward | next-forward */
	const char *cpu_checkpointing;     /* auto | yes | no */
	const char *backward_prefetch;     /* pre | post */
	const char *checkpoint_wrap;       /* inside | outside */
	const char *grad_sync;             /* each | last */
	const char *checkpoint_early_stop; /* yes | no */
	const char *compile;               /* yes | no */
	const char *dora;                  /* yes | no */
	const char *fused_qkv;             /* auto | yes | no */
	const char *repeat_kv;             /* auto | yes | no */
	const char *moe_gemm;              /* loop | grouped */
	const char *pointwise;             /* fused | eager */
	const char *logits_upcast;         /* loss | model */
	uint64_t doc_tokens;               /* 0: one document a sequence */
	double deadline, budget;
	bool force;
	bool wide; /* plan/compare text: every column */
	uint64_t seq, batch, global_batch, grad_accum, lora_rank, gpus_per_node, max_gpus;
	uint64_t tier_nodes; /* plan and compare: nodes the host-tier options may span */
	uint64_t threads; /* plan and compare's search workers, 0 = one per online CPU */
	uint64_t gpus, tp, pp, dp, zero, prefetch, interleave, reduce_bucket, ep, cp, expert_tp;
	uint64_t first_stage_layers, last_stage_layers;
	uint64_t dp_shard; /* 0: ZeRO's partition spans every data-parallel rank */
	uint64_t max_in_cpu; /* zero-infinity: a rank's trainable parameters kept in DRAM */
	const char *recompute_modules;	    /* --recompute selective's modules */
	uint64_t recompute_layers;	    /* 0: every layer recomputes */
	uint64_t activation_offload_layers; /* 0: every layer's activations offload */
	const char *fp8_all_gather;         /* yes | no */
	const char *fp8_recipe;             /* auto | te | torchao */
	double tokens, epochs, dataset_tokens, dram;
	double offload_ratio; /* zero3-offload's Twin-Flow: the optimizer's share on the CPU */
	double amortize_years, pue, usd_per_kwh;
	double gpu_headroom; /* fraction of each GPU's memory kept free */
	double lora_dropout; /* PEFT lora_dropout */
	int method, precision, optimizer, attention, recompute; /* recompute -1 = auto */
	bool optimizer_foreach; /* --optimizer named the Trainer's foreach AdamW (adamw_torch) */
	int loss;                                               /* -1 = auto */
	int grad_dtype;
	int master; /* enum mdl_master */
	int swiglu; /* index of mdl_parse_enum's "swiglu" names: 0 fused, 1 eager */
	int quant; /* enum mdl_quant */
	int kbit_upcast; /* enum mdl_upcast */
	const char *quant_head; /* yes | no */
	const char *quant_from; /* auto | model | fp16 */
	const char *double_quant; /* yes | no */
	int lora_dtype;  /* mdl_parse_enum's "lora-dtype" names: 0 model, 1 fp32 */
	int lora_kernels; /* mdl_parse_enum's "lora-kernels" names: 0 peft, 1 unsloth */
	unsigned lora_targets;
	bool help;
	/* which options the user gave, by table index (a --deepspeed config's count as given) */
	uint64_t given[2];
	const char *deepspeed; /* --deepspeed FILE: its flags are in ds, its notes too */
	struct tp_ds ds;
};

/* Parses argv[first..argc) for command cmd (a CMD_* bit). 0 ok, -2 usage, -3 bad value. */
int tp_opts_parse(int cmd, int argc, char **argv, int first, struct tp_opts *o, char *err,
		  size_t errlen);

/* Whether value is one that option `name` of command cmd takes on its own: a number in its
 * range, a name it knows, a --deepspeed config that reads (the checks tp_opts_parse makes of
 * each value). 0 ok, -2 no such option, -3 bad value; err says which. */
int tp_opts_value(int cmd, const char *name, const char *value, char *err, size_t errlen);

/* True if the user gave the option with this name. */
bool tp_opts_given(const struct tp_opts *o, const char *name);

/* A yes|no flag's value into *yes; -1 naming the flag and the allowed values. */
int tp_yes_no(const char *flag, const char *v, bool *yes, char *err, size_t errlen);

/*
 * Resolves the job, hardware and economics options: model lookup, flash "name:count", DRAM and
 * bay limits. 0 ok, else the exit code with err naming the flag.
 */
struct sim_workload;
struct mdl_hw;
struct sim_econ;
struct sim_config;
int tp_inputs(const struct tp_opts *o, struct sim_workload *w, struct mdl_hw *hw,
	      struct sim_econ *econ, char *name, size_t namelen, char *path, size_t pathlen,
	      char *err, size_t errlen);
/* The framework's settings of c that plan and compare share with simulate (every option of a
 * search runs with them, each policy taking those it runs): --prefetch, --overlap-grad-reduce,
 * --clip-grad, --foreach-optimizer, --optimizer-in-backward, --activation-offload,
 * --tp-comm-overlap, --swap-pipeline, --reduce-bucket and what --deepspeed says of its buckets
 * and buffers. The
 * rest of c is left as it was. 0 ok, else the exit code with err naming the flag. */
int tp_framework_config(const struct tp_opts *o, const struct sim_workload *w,
			struct sim_config *c, char *err, size_t errlen);
/* The simulate configuration: policy, --tp/--pp/--dp from --gpus, micro-batches per step, and
 * the framework's settings (tp_framework_config). A --deepspeed config's micro-batch or
 * accumulation that DeepSpeed derives from its train_batch_size and the data-parallel width
 * goes into w's job and grad_accum. 0 ok, else the exit code with err naming the flag. */
int tp_sim_config(const struct tp_opts *o, struct sim_workload *w, struct sim_config *c,
		  char *err, size_t errlen);
/* The inputs `simulate` flags (argv[2..argc), argv[0..1] ignored) resolve to: the workload,
 * hardware, economics and configuration sim_run reads, each zeroed whole first (padding
 * included), so that flags resolving alike give equal bytes. 0 ok, else the exit code with err
 * naming the flag. */
struct sim_econ;
int tp_resolve_argv(int argc, char **argv, struct sim_workload *w, struct mdl_hw *hw,
		    struct sim_econ *ec, struct sim_config *c, char *err, size_t errlen);
/* Runs `simulate` flags (argv[2..argc), argv[0..1] ignored) on engine e: the one path sweep,
 * validate and regress share with the command. stop_unfit: a configuration stops where a GPU
 * overflows (o->stopped; sweep --unfit skip). The workload comes back in *w when w is not
 * NULL, the hardware in *hw likewise. 0 ok, else the exit code with err naming the flag. */
struct eng;
struct sim_option;
int tp_simulate_argv(int argc, char **argv, struct eng *e, bool stop_unfit, struct sim_option *o,
		     struct sim_workload *w, struct mdl_hw *hw, char *err, size_t errlen);
/* The same for a JSON object of simulate flags ({"model": "70b", "seq": 4096, ...}: strings
 * or numbers, at most TP_JSON_FLAGS): traces and scenarios are written that way. */
#define TP_JSON_FLAGS 36
struct cJSON;
int tp_simulate_json(const struct cJSON *flags, struct eng *e, struct sim_option *o,
		     struct sim_workload *w, struct mdl_hw *hw, char *err, size_t errlen);
/* Whether value of simulate's flag `name` can run on its own: tp_opts_value's check, and what
 * it names can be read: a model (catalog name or config.json), a GPU, host or flash entry or
 * file, a policy, a profile or price list. What fails only beside other flags (a layout the
 * model's layers do not divide, more drives than the host's bays, a profile measured on another
 * GPU) is left to the run. 0 ok, else the exit code (EXIT_USAGE: no such flag) with err naming
 * flag and value. */
int tp_input_value(const char *name, const char *value, char *err, size_t errlen);
/* Whether value of option `name` names an input file rather than a catalog entry: a --profile,
 * --prices or --deepspeed file, or a --model, --gpu, --host or --flash value (its name, before
 * a count) that is a path (cfg_is_path). A file of flags (a sweep's grid, a validate trace, a
 * regress scenario) has it read beside itself (cfg_path_beside). */
bool tp_opts_input_file(const char *name, const char *value);
/* The value of option `name` with the file it names made absolute (realpath; --flash's :COUNT
 * kept after it), into out: 0, or -1 where it names no file (tp_opts_input_file), the file
 * does not resolve or out is too short. A record of flags kept elsewhere (validate --run's
 * trace) reads the same files from wherever it is replayed. */
int tp_input_file_abs(const char *name, const char *value, char *out, size_t len);
/* Flags a file holds (a validate trace, a regress scenario: JSON as tp_simulate_json takes
 * them): each file they name by a relative path is taken beside that file (tp_opts_input_file,
 * cfg_path_beside), so it reads the same from any directory. */
void tp_flags_beside(struct cJSON *flags, const char *file);
/* Warns on stderr about the inputs: --seq beyond the model's positions, a misspelled
 * config.json key (mdl_arch.warning), a profile measured on another machine. */
void tp_warn_inputs(const char *cmd, const struct tp_opts *o, const struct sim_workload *w,
		    const struct mdl_hw *hw);

/* Prints the options of cmd with defaults, units and help, aligned. */
void tp_opts_help(int cmd, FILE *fp);

#endif
