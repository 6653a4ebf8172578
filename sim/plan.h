/*
 * plan — the search behind `tierplan plan` and `tierplan compare`.
 *
 * GPU-only (policy gpu): GPU counts from the fewest that fit (1..gpus_per_node, then whole
 * nodes) up to 8x that, doubling, and on past it while --deadline is missed and each doubling
 * still shortens the run (up to --max-gpus); at each count every layout over TP (powers of two
 * within a node, dividing the heads), PP (dividing the layers) with interleaving (2-8 virtual
 * stages where they divide a stage and the micro-batches come in groups of pp), DP, ZeRO 0-3,
 * recompute (none, selective, full, and Megatron-Core's full recompute of the fewest layers a
 * stage that fits by the analytic memory) and micro-batch (1, 2, 4, 8 unless --batch fixes it).
 * Layouts whose analytic memory (model/layout) exceeds the GPU by 10 % are pruned; the rest are
 * simulated in order of a lower bound on time per token (step_stage_floor: the compute stream's
 * GEMMs, memory-bound kernels and TP all-reduces, plus the bubble; with stages, also the last
 * stage's, which runs the whole head), stopping when no remaining layout can beat the best
 * simulated one (branch and bound: the bound never exceeds the simulated time). Once a layout
 * has fit, a layout that does not stops simulating where a GPU overflows
 * (sim_config.stop_unfit).
 * Host-tier options (the SIM_PLAN_HOST_POLICIES below; one node, or tier_nodes): 1, 2, 4, ...
 * GPUs up to the host's slots times the nodes (or --max-gpus, where fewer), micro-batch 1, 2,
 * 4, 8, DRAM (per node) from the smallest size that holds the job up to the host's maximum
 * (unless --dram fixes it), and the drives: the given count, and when the option keeps state
 * on flash and --flash gave no count, from the fewest drives that hold it, doubling, to a full
 * bay (at the two smallest DRAM sizes that fit: host_count). A GPU, or the largest DRAM, too
 * small for a micro-batch is too small for the larger ones (what a placement needs of both
 * grows with the tokens): those are not simulated.
 * Every option trains the same global batch (sequences per optimizer step), so all take the
 * same optimizer steps and differ only in speed, cost and power.
 *
 * Result: the Pareto front of fitting options over (owned cost, runtime, peak power; a runtime
 * under 1 % shorter keeps no dearer option on it), and the
 * recommendations: the best by --objective among options that meet --deadline and --budget,
 * the cheapest GPU-only and the cheapest host-tier option (meeting the deadline when any does),
 * each within the drives' rating where an option is; of the options within 1 % of the best's
 * figure and cost, the one that buys the least hardware (compare's row of each kind at each
 * count is chosen alike).
 * Failure: -1 with err for an empty global batch or a simulator error; a model that fits nowhere
 * gives the closest non-fitting options and no recommendation.
 */
#ifndef TIERPLAN_PLAN_H
#define TIERPLAN_PLAN_H

#include "sim.h"

#define SIM_PLAN_MAX_OPTIONS 32
#define SIM_PLAN_MAX_GPUS 65536

enum sim_objective { OBJ_COST, OBJ_TIME, OBJ_POWER, OBJ_GPUS };

/* The host-tier policies the plan searches (tiered, tiered-dram, zero-infinity, zero3-offload,
 * zero-offload). */
#define SIM_PLAN_HOST_POLICIES 5

struct sim_plan {
	struct mdl_states states; /* whole model */
	double activations_bytes; /* one micro-batch, whole model, the job's recompute */
	double other_bytes;       /* per-GPU runtime overhead */
	struct sim_option options[SIM_PLAN_MAX_OPTIONS];
	int noptions;
	int rec_best, rec_gpu_only, rec_tiered; /* indexes into options, -1 = none */
	/* per recommendation (best, gpu-only, tiered): the option its figure and cost alone would
	 * have taken, where another within 1 % of both buys less hardware and was taken instead
	 * (an index into options, -1 = none, or, for compare, not one of its rows) */
	int rec_passed[3];
	bool deadline_met;        /* rec_best meets --deadline and --budget */
	/* the fewest GPUs a GPU-only layout fits on (0: not searched or none fits): what memory
	 * needs; GPUs beyond it buy speed, not capacity */
	uint32_t gpus_for_memory;
	/* the nodes the host-tier options could span (1, or sim_plan_req.tier_nodes) and the most
	 * GPUs they were searched on: those nodes', or --max-gpus */
	uint32_t host_tier_nodes, host_tier_gpus;
	uint64_t layouts_evaluated, fitting;
	/* candidates never simulated: a bound (the fastest schedule, the analytic memory, a smaller
	 * micro-batch or DRAM size that already overflowed the GPU or fit) says they cannot win */
	uint64_t layouts_pruned;
	/* host-tier policies with no placement for the fixed recompute (sim_run's 1): their
	 * registry names, in search order */
	const char *no_placement[SIM_PLAN_HOST_POLICIES];
	int nno_placement;
};

struct sim_plan_req {
	uint32_t max_gpus;    /* the most GPUs an option uses, GPU-only and host-tier */
	uint32_t tier_nodes;  /* nodes the host-tier search spans (0 or 1: one) */
	uint32_t threads;     /* workers for the search (0 or 1: the caller alone): the GPU-only
			       * search and each (policy, GPU count) of the host-tier search are
			       * tasks; the result does not depend on it */
	bool recompute_fixed; /* the user chose --recompute */
	bool loss_fixed;      /* the user chose --loss */
	bool batch_fixed;     /* the user chose --batch */
	bool dram_fixed;      /* the user chose --dram */
	bool flash_fixed;     /* the user gave a drive count */
	enum sim_objective objective;
	double deadline;      /* seconds of runtime, 0 = none */
	double budget;        /* USD owned cost, 0 = none */
	/* --deepspeed: only this policy (NULL: all); for "gpu" only ZeRO stage zero, and data
	 * parallelism alone (DeepSpeed without Megatron has no tensor or pipeline parallelism) */
	const char *policy;
	int zero;
	/* zero3-offload only one way (--offload-param, or --deepspeed): keeping the parameter
	 * shards on the GPUs (params_on_gpu, --offload-param no) or in pinned DRAM; else both */
	bool params_fixed, params_on_gpu;
	/* zero3-offload with the parameters on the GPUs runs the framework's --offload-ratio
	 * (given, or a --deepspeed config's offload_optimizer.ratio); else the whole optimizer on
	 * the CPU, and beside each such option that fits the Twin-Flow ratio its GPUs have room
	 * for (plan.c, host_twin) */
	bool ratio_fixed;
	/* the framework's settings every option runs with, each policy taking those it runs
	 * (tp_framework_config: prefetch, overlap, clipping, foreach AdamW, swap pipeline,
	 * buckets, DeepSpeed's buffers; the rest of it is ignored); NULL: the defaults */
	const struct sim_config *framework;
	/* --model-parallel no: GPU-only layouts over data parallelism alone (no tp, pp, cp, ep) */
	bool dp_only;
	/* compare: exactly these GPU counts (no search over counts), else NULL */
	const uint32_t *counts;
	int ncounts;
};

/* The framework's settings a request runs with: its own, or the defaults (a zeroed config). */
const struct sim_config *sim_plan_framework(const struct sim_plan_req *r);
/* Whether the plan ran option o with --grad-sync last (its FSDP options on the GPUs). */
bool sim_plan_grad_sync_last(const struct sim_plan_req *req, const struct sim_option *o);
/* The inputs the search ran option o with, for re-simulating it (a report's timeline): w's job
 * and hw as the request's with the option's micro-batch, recompute, loss, DRAM and drives, and
 * c the configuration with the framework's settings its policy takes. */
void sim_plan_rerun(const struct sim_plan_req *req, const struct sim_option *o,
		    struct sim_workload *w, struct mdl_hw *hw, struct sim_config *c);

/* Seconds per step no schedule of the GPU-only layout l with m micro-batches per step can beat
 * (the search's pruning bound; ex_share: the routed experts' share of the trainable
 * parameters; tp_overlap: --tp-comm-overlap runs; ep_overlap: --ep-overlap runs,
 * sim_ep_overlap; ep_dedup: a flex --moe-dispatcher, step_ep_wire). Exact as a bound: every
 * term is work the simulated step also does, at a rate it cannot exceed. */
double sim_plan_bound(const struct sim_workload *w, const struct mdl_hw *hw,
		      const struct mdl_layout *l, uint64_t m, double ex_share, bool tp_overlap,
		      bool ep_overlap, bool ep_dedup);
/* Seconds per step the same layout's activation offloading (f's --activation-offload, with its
 * --activation-offload-layers) cannot beat: the offloaded tensors' way down to DRAM and back
 * over the host link, on every resource of the copies' path; 0 without offloading. A bound
 * beside sim_plan_bound's, exact as it is. */
double sim_plan_offload_bound(const struct sim_workload *w, const struct mdl_hw *hw,
			      const struct sim_config *f, const struct mdl_layout *l, uint64_t m);
/* Micro-batches per step on dp data-parallel ranks: --grad-accum when given, else enough to
 * reach the global batch. */
uint64_t sim_plan_micro_batches(const struct sim_workload *w, uint32_t dp);

/* Why the GPU-only search keeps to data parallelism (--model-parallel no, --deepspeed, the
 * optimizer stepped in backward, GPTQ base weights), or NULL when it searches tensor, pipeline,
 * context and expert parallelism too. */
const char *sim_plan_dp_only(const struct sim_workload *w, const struct sim_plan_req *r);

/* "cost" | "time" | "power" | "gpus"; -1 + err listing them. */
int sim_objective_parse(const char *s, enum sim_objective *o, char *err, size_t errlen);
const char *sim_objective_name(enum sim_objective o);

int sim_plan_run(const struct sim_workload *w, const struct mdl_hw *hw, const struct sim_econ *e,
		 const struct sim_plan_req *req, struct sim_plan *p, char *err, size_t errlen);

#endif
