/*
 * estimate — analytic step time, power, cost and wear of one configuration.
 *
 * GPU-only (gpu policy): the micro-batch's hardware FLOPs at a sustained fraction of the dense
 * peak, tensor-parallel all-reduces on the critical path, the 1F1B pipeline bubble, data-parallel
 * gradient traffic overlapped with backward (exposed only where it is longer), and the optimizer
 * step over the GPU's shard at HBM speed. Collectives follow the ring alpha-beta model
 * (2 (n-1)/n x bytes / bandwidth for all-reduce, half that for reduce-scatter or all-gather).
 * Tiered (tiered policy, one node): weights stream layer by layer from DRAM over each GPU's PCIe
 * link (three passes per micro-batch with full recompute), gradients stream back, optimizer
 * state lives in DRAM and spills to flash, the CPU runs AdamW; the update overlaps the last
 * micro-batch's backward (Fuyou/Ratel), so a step is max(compute, PCIe) per micro-batch plus the
 * part of the update that backward does not hide (published.md 9.4 reconstruction).
 *
 * The discrete-event simulator (sim/engine, issue "simulator") replaces these formulas; the
 * sim_option result is the interface both fill. Constants carry their sources in estimate.c.
 */
#ifndef TIERPLAN_ESTIMATE_H
#define TIERPLAN_ESTIMATE_H

#include <stdbool.h>
#include <stdint.h>

#include "../model/arch.h"
#include "../model/job.h"
#include "../model/layout.h"
#include "catalog.h"

struct sim_hw {
	struct cfg_gpu gpu;
	struct cfg_host host;
	struct cfg_flash flash;
	uint32_t flash_count;   /* drives per node for tiered options */
	double dram;            /* bytes per node */
	uint32_t gpus_per_node;
	bool dram_set, flash_set; /* given on the command line (else the host's defaults) */
};

struct sim_econ {
	double amortize_years; /* capex lifetime */
	double pue;            /* facility power / IT power */
	double usd_per_kwh;
};

struct sim_workload {
	struct mdl_arch arch;
	struct mdl_job job;
	uint64_t grad_accum;   /* micro-batches per step; 0 = from global_batch (see plan.h) */
	uint64_t global_batch; /* sequences per optimizer step, rounded up per layout */
	double tokens;         /* tokens to train on */
};

enum sim_kind { SIM_GPU_ONLY, SIM_TIERED };

struct sim_option {
	char name[128];
	enum sim_kind kind;
	const char *policy; /* "gpu" or "tiered" */
	uint32_t gpus, nodes;
	struct mdl_layout layout;
	enum mdl_recompute recompute;
	uint64_t micro_batch, grad_accum;
	bool fits;
	char overflow[160]; /* which tier overflowed and by how much, when !fits */

	struct mdl_gpu_memory gpu_mem; /* per GPU */
	double peak_gpu, peak_dram, peak_flash; /* bytes: per GPU, per node, per node */

	double step_seconds, tokens_per_step, tokens_per_second, steps, runtime_seconds;
	double model_tflops_per_gpu;
	double t_compute, t_comm, t_pcie, t_flash, t_cpu; /* per step, seconds, before overlap */

	double peak_power_watts, avg_power_watts, energy_kwh;
	double cost_capex, cost_energy, cost_cloud, cost_total;
	double flash_bytes_written_per_step, flash_bytes_written, flash_life_fraction;
};

/* Sustained fraction of dense peak (see estimate.c for its sources). */
extern const double SIM_GEMM_EFFICIENCY;

/* Estimates a GPU-only layout with m micro-batches per step; fills *o (o->fits may be false). */
void sim_estimate_gpu_only(const struct sim_workload *w, const struct sim_hw *hw,
			   const struct sim_econ *e, const struct mdl_layout *l, uint64_t m,
			   struct sim_option *o);

/* Estimates the tiered policy on n GPUs of one node with m micro-batches per step. */
void sim_estimate_tiered(const struct sim_workload *w, const struct sim_hw *hw,
			 const struct sim_econ *e, uint32_t n, uint64_t m, struct sim_option *o);

/* Achievable one-direction host<->GPU bandwidth of a PCIe link, bytes/s. */
double sim_pcie_bandwidth(double gen, double lanes);

#endif
