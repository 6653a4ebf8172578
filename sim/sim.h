/*
 * sim — the simulator's interface: a workload on hardware under one configuration (layout,
 * micro-batches per step, policy) runs through the discrete-event engine (sim/engine) as one
 * training step (sim/step), and comes back as a sim_option: peak bytes per tier, whether it
 * fits and what overflowed, step time, throughput, power, energy, flash writes, then runtime,
 * cost and wear for the whole job.
 *
 * Policies (one module each, sim/pol_*.c, one registry in sim/sim.c):
 *   gpu            all state in HBM: DP / ZeRO 0-3, TP, PP with 1F1B, gradient accumulation
 *   zero-offload   ZeRO-2, optimizer state and AdamW on the CPU, gradients down (bounded
 *                  buckets) and weights up over PCIe (Ren et al. 2021, ZeRO-Offload)
 *   zero3-offload  ZeRO-3 with parameters and optimizer state in DRAM, gathered per layer
 *                  (DeepSpeed offload_param / offload_optimizer: cpu)
 *   zero-infinity  weights and optimizer state on NVMe, streamed layer by layer through DRAM,
 *                  the update after backward (Rajbhandari et al. 2021, ZeRO-Infinity)
 *   tiered         aiDAPTIV+: optimizer state and gradients on the flash cache, states
 *                  partitioned over the ranks, weights streamed from DRAM or flash, checkpoints
 *                  on GPU or flash, updated layer by layer as gradients arrive, overlapping
 *                  backward (Fuyou / Ratel)
 *   tiered-dram    the same design with DRAM filled first and only the rest on flash
 *
 * Failure: sim_run returns -1 with a message for a layout the policy cannot run (naming the
 * degree and the allowed values) or an engine failure; a configuration that does not fit is not
 * a failure: fits = false and overflow names the tier and by how much.
 */
#ifndef TIERPLAN_SIM_H
#define TIERPLAN_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "workload.h"

struct sim_econ {
	double amortize_years; /* capex lifetime */
	double pue;            /* facility power / IT power */
	double usd_per_kwh;
};

/* What a host tier holds at its peak, per node, by kind: the parts of sim_option's peak_dram
 * and peak_flash (the OS reserve, ZeRO-Infinity's pinned buffers and the tiers' staging are
 * `other`); all zero where the tier holds nothing of the option's. */
struct sim_tier_memory {
	double weights, gradients, optimizer, activations, other;
};

struct sim_option {
	char name[160];
	enum sim_kind kind;
	const char *policy; /* registry name */
	uint32_t gpus, nodes;
	struct mdl_layout layout;
	enum mdl_recompute recompute;
	uint32_t recompute_layers; /* full recompute of only the first N layers of each pipeline
				    * chunk (--recompute-layers); 0: of every layer */
	enum mdl_loss loss;
	uint64_t micro_batch, grad_accum;
	bool params_on_gpu; /* zero3-offload with --offload-param no */
	/* zero3-offload's Twin-Flow setting, 1 - its --offload-ratio as sim_config.twin_gpu holds
	 * it (0: the whole optimizer on the CPU), and the share of the rank's parameters whose
	 * optimizer sub-groups that keeps and steps on the GPU */
	double twin_gpu, opt_gpu;
	bool fits;
	char overflow[160]; /* which tier overflowed and by how much, when !fits */
	/* the run stopped where a GPU overflowed (sim_config.stop_unfit): fits is false, the
	 * peaks are the levels it reached (lower bounds), and its time, power, energy, writes
	 * and cost are not known */
	bool stopped;

	struct mdl_gpu_memory gpu_mem; /* per GPU */
	double peak_gpu, peak_dram, peak_flash; /* bytes: per GPU, per node, per node */
	struct sim_tier_memory dram_mem, flash_mem; /* per node, at each tier's peak */
	/* the GPU peak as PyTorch's allocator counts it, without the CUDA context: tensors
	 * (torch.cuda.max_memory_allocated, what LitGPT and torchtune print) and the cached
	 * blocks holding them (max_memory_reserved), both without a paged optimizer's states
	 * (CUDA managed memory); peak_gpu = reserved + those states + context is what the device
	 * must hold (nvidia-smi's figure) */
	double peak_gpu_allocated, peak_gpu_reserved;

	double step_seconds, tokens_per_step, tokens_per_second, steps, runtime_seconds;
	double model_tflops_per_gpu;
	double mfu; /* model FLOPs per second per GPU over its dense bf16 peak */

	double peak_power_watts, avg_power_watts, energy_kwh;
	double cost_capex, cost_energy, cost_cloud, cost_total;
	double cost_flash_wear;      /* of cost_capex: drives written past their rating within the
				      * amortisation period, the share of their endurance used */
	double purchase_usd;         /* the hardware the option buys: GPUs, host share, DRAM, drives,
				      * and beyond one node the network fabric (fabric_usd) */
	double fabric_usd;           /* of purchase_usd: NICs, switch ports, cables */
	double facility_usd;         /* facility power to provision for its peak x PUE */
	double usd_per_mtok_owned, usd_per_mtok_cloud; /* cost per million training tokens */
	uint64_t sequences_per_step; /* the global batch it trains: m x dp x micro-batch */
	double flash_bytes_written_per_step, flash_bytes_written, flash_life_fraction;
	double energy_joules_per_step;
	uint64_t events;          /* engine events of the simulated step */
	uint64_t micro_simulated; /* micro-batches simulated; the rest extrapolated (step.h) */
	/* where the first micro-batches' period was not steady, so that every one was simulated:
	 * the resource whose queue grew from one to the next, and by what share of the period;
	 * "" and 0 elsewhere (an engine resource's name: ENG_NAME bytes) */
	char unsteady[48];
	double unsteady_growth;
	double extra_periods;     /* steady micro-batches extrapolated */
	int mark0, mark1;         /* engine marks bounding one steady micro-batch, -1 none */
	double ckpt_in_dram;      /* tiered: activation checkpoints offloaded (bool as 0/1) */
	double dram;              /* DRAM per node the option buys (sim_dram_bought), bytes */
	uint32_t flash_count;     /* drives per node it uses (0 when it keeps nothing on flash) */
	double peak_power_facility_watts; /* peak x PUE */
	double flash_dwpd;        /* drive writes per day the job needs, per drive */
	double flash_write_rate;  /* mean bytes/s a drive of the array wrote the step's writes at
				   * (mdl_flash_bandwidth over the drives; through and past an SLC
				   * cache: mdl_flash_cached_write); 0 = nothing on flash */
	/* seconds of the step after its last backward's gradients landed (the end of every
	 * stage's last gradient reduction or copy): the optimizer step and the weights going
	 * back, what DeepSpeed's wall_clock_breakdown and Megatron's timers call "optimizer";
	 * near 0 where the update runs inside backward (tiered). -1: not known, where the run
	 * did not keep its task times (a search's runs, sim_run with folds) */
	double update_seconds;
	double flash_pause;       /* seconds a step the drives do not write (their SLC caches
				   * fold free then: mdl_flash_slc_free) */
	double flash_slc_free;    /* what the step's writes found free of a drive's SLC cache,
				   * bytes (0: none, or nothing on flash) */
	bool flash_over_rating;   /* flash_dwpd above the drives' rated DWPD */
	double host_fixed;        /* DRAM per node the policy keeps (reserve, pinned buffers) */
	bool dram_short;          /* some candidate placement was short of DRAM (step_place) or
				   * overflowed it: more DRAM could change the result */
	/* the least DRAM per node any of the policy's placements took where it fit or DRAM alone
	 * overflowed (where none did, the option's own): a smaller DRAM fits none of them. Not the
	 * reported miss's, which is the one closest to fitting its GPU (checkpoints in DRAM ask
	 * more of it) */
	double dram_need;
};

/* The registry: NULL past the end / for an unknown name. */
const struct sim_policy *sim_policy_at(int i);
const struct sim_policy *sim_policy_find(const char *name);
/* "gpu, zero-offload, ..." for messages. */
const char *sim_policy_names(void);
/* An option's policy as reports name it, into buf (SIM_POLICY_LABEL bytes hold any); returns
 * buf: zero3-offload with the optimizer alone offloaded (--offload-param no) is
 * "zero3-offload (opt)", so the two DeepSpeed configs read apart, and with Twin-Flow's ratio
 * "zero3-offload (opt r0.7)". */
#define SIM_POLICY_LABEL 48
const char *sim_option_policy(const struct sim_option *o, char *buf, size_t n);
/* An option's recompute as reports name it: the mode, and under --recompute-layers how many of
 * each stage's (or, interleaved, each chunk's) layers it recomputes: "full (4 layers a stage)".
 * Into buf; returns buf. */
const char *sim_option_recompute(const struct sim_option *o, char *buf, size_t len);
/* --swap-pipeline's value of c (none, read, write, both), and c's from one: 0, or -1 when s is
 * none of them. */
const char *sim_swap_pipeline_name(const struct sim_config *c);
int sim_swap_pipeline_parse(const char *s, struct sim_config *c);
/* --cpu-checkpointing's value of c (auto, yes, no), and c's from one: 0, or -1 when s is none
 * of them. */
const char *sim_cpu_ckpt_name(const struct sim_config *c);
int sim_cpu_ckpt_parse(const char *s, struct sim_config *c);
/* --moe-dispatcher's value of c (alltoall, deepep, hybridep), and c's from one: 0, or -1 when
 * s is none of them. */
const char *sim_dispatcher_name(const struct sim_config *c);
int sim_dispatcher_parse(const char *s, struct sim_config *c);
/* Whether a policy named so is one of DeepSpeed's offloads (zero-offload, zero3-offload,
 * zero-infinity), whose checkpoints --cpu-checkpointing places. */
bool sim_ds_offload(const char *policy);

/* Whether GPTQ base weights (mdl_job_gptq) can run under policy p at ZeRO stage `zero`: auto-gptq
 * registers its packed weights as module buffers, which ZeRO-3 neither partitions nor offloads
 * (DeepSpeed's zero.Init partitions a module's named_parameters only: partition_parameters.py,
 * _post_init_method) [B: source], and the host-tier policies stream weights as ZeRO-3 does;
 * so policy gpu at ZeRO 0-2 and zero-offload (ZeRO-2, the adapters' optimizer on the CPU). */
bool sim_gptq_runs(const struct sim_policy *p, uint32_t zero);

/*
 * Runs one configuration through the engine e (reused across calls; after the call it holds
 * the best variant's run for traces and per-resource figures, unless it keeps no history:
 * eng_keep_history(e, false) says only the option is read). Drives with an SLC cache whose
 * writes overflow what it folds free in the step's pauses run the configuration again, at the
 * mean write rate its writes and pauses give (mdl_flash_cached_write, mdl_flash_slc_free),
 * until the rate settles, up to six runs. 0 ok, -1 + err; 1 + err when
 * the policy has no placement for the recompute mode the caller fixed (tiered has no per-op
 * SAC): not an error of the inputs, an option that does not exist (the planner skips it).
 */
struct eng;
int sim_run(struct eng *e, const struct sim_workload *w, const struct mdl_hw *hw,
	    const struct sim_econ *ec, const struct sim_config *c, struct sim_option *o,
	    char *err, size_t errlen);

/*
 * PyTorch caching allocator: reserved over allocated bytes, 6.27 / 6.21 GiB after model init in
 * torchtune's e2e_flow tutorial (published.md B.3) [B]: the allocator reserves the tensors' peak
 * plus this fraction; the CUDA context sits outside it.
 */
#define SIM_ALLOC_SLACK (6.27 / 6.21 - 1.0)
/* The sizes an option's DRAM is bought in, ascending, into out (MDL_DRAM_SIZES at most): --dram's
 * alone when given, else those the host's DIMMs make (mdl_dram_sizes). Returns the count. */
int sim_dram_sizes(const struct mdl_hw *hw, double *out);
/* The DRAM per node an option buys for a need of `need` bytes: --dram when given, else the
 * smallest of sim_dram_sizes that holds it. */
double sim_dram_bought(const struct mdl_hw *hw, double need);

/* Busy seconds and units moved of engine resource r over the whole step, extrapolated. */
void sim_resource_usage(const struct eng *e, const struct sim_option *o, int r, double *busy_s,
			double *work);
/* Resource r's load over the step of o: its work over what its capacity could do in the step
 * (a link busy all step at a tenth of its rate is 10 % loaded); 0 for an empty step. */
double sim_resource_load(const struct eng *e, const struct sim_option *o, int r);

#endif
