/*
 * step — one training step of one configuration, built as a task graph and run on the engine.
 *
 * A policy (sim/pol_*.c) decides placement: where weights, gradients, optimizer state and
 * activation checkpoints live (GPU, DRAM, flash), how weights reach the GPU (resident, gathered
 * from ZeRO-3 shards, streamed from DRAM or flash), where gradients go, and when and where the
 * optimizer runs. The builder here turns that placement into tasks, one representative GPU per
 * pipeline stage: GPUs of a data- or tensor-parallel group do the same work at the same time, so
 * the representative gets 1/k of every resource the k GPUs of its node share (DRAM bandwidth,
 * the NVMe array, the CPU) and its pools stand for k copies. Max-min sharing among k identical
 * flows gives each exactly 1/k, so this reduction is exact for symmetric layouts.
 *
 * The step: micro-batches in the 1F1B order of Narayanan et al. 2021 (GPipe order when pp = 1
 * is the same thing), each stage's layers in blocks (one layer per block when weights move per
 * layer, else at most STEP_BLOCKS blocks, enough to overlap bucketed gradient reduction), TP
 * all-reduces on the compute stream (Megatron's are synchronous), gradient reductions on a
 * communication stream and weight all-gathers on another beside it (FSDP's and DeepSpeed's
 * streams; a hybrid layout's replica all-reduces on a third), copies on one stream per PCIe
 * direction, CPU AdamW and NVMe I/O on their own streams. Micro-batches in the steady phase
 * are identical: without PP the builder simulates three (the first, one steady one, the last,
 * which carries the gradient reduction and update), with PP pp + 3 (1F1B warm-up, steady
 * phase, cool-down), and the caller repeats one steady period for the rest (engine marks on
 * two consecutive backward ends of stage 0).
 * Within a pass the layers are identical too: where no history is kept (a search), a single
 * stage's per-layer passes are built with their middle left out and the engine adds it back
 * where it finds the pass periodic (eng_fold), exactly; a pass it does not is built whole.
 *
 * Failure: -1 with a message (engine errors, impossible placement).
 */
#ifndef TIERPLAN_STEP_H
#define TIERPLAN_STEP_H

#include "engine.h"
#include "workload.h"

#define STEP_BLOCKS 8
#define STEP_FOLD_PASSES 64 /* foldable passes of a step the builder tracks (fold_bwd's bits) */
#define STEP_FOLD_WHOLE 0xff /* step_ctx.fold_unit: the pass is built whole */
#define STEP_FOLD_WIDE 0x80  /* step_ctx.fold_unit: with more blocks before the gap (its low bits
			      * the period, if any) */
/*
 * GPU time a matrix kernel (GEMM, fused attention) costs beyond its FLOPs at the MAMF rate:
 * the fill and drain of its tile pipeline and its last partial wave. Fitting t = t0 + F / R to
 * the bf16 GEMMs XLA measured for its cost model (openxla/xla
 * xla/service/gpu/model/matmul_interpolator_data.h: 375 shapes each on H100 (sm_90) and B200
 * (sm_100), b x m x n x k from 256 to 4 x 4096^3) gives t0 = 6.2-7.2 us on both, with R within
 * 1.5 % of the H100's MAMF; 8 % rms error on shapes of 8 GFLOP and up [B: our fit to XLA's
 * measurements]. It is why the same GEMM share of the MAMF leaves a faster GPU, or thinner TP
 * shards, further from its peak. Seconds.
 */
#define STEP_MATMUL_FIXED 6.5e-6
/* DeepSpeed ZeRO-3's sub_group_size default, 1e9 elements: the optimizer steps its partition in
 * sub-groups (tiles) of this many parameters (DeepSpeed config docs) [A]. */
#define STEP_SUB_GROUP 1e9
/*
 * ZeRO-Infinity's parameter swap buffers (offload_param buffer_count x buffer_size, pinned and
 * allocated once: partitioned_param_swapper.py): 8 of 1 GB in the Smart-Infinity configuration
 * (published.md 9.5) [A/C]. DeepSpeed asserts that a buffer holds the largest parameter
 * partition it swaps in ("More elements ... than buffer size", get_buffer) [A: DeepSpeed
 * source], so a model whose largest tensor's partition passes 1 GB (Llama 3's 128k-token
 * embedding on one rank: 2.1 GB in bf16) needs buffers that large; plan --emit writes the same.
 */
#define STEP_PARAM_BUFFERS 8
#define STEP_PARAM_BUFFER_BYTES 1e9
/* Elements of the largest parameter partition of a model sharded over dp ranks, and of each
 * buffer the plan counts (DeepSpeed's buffer_size): 1 GB's worth, or that partition. */
double step_param_partition(const struct mdl_arch *a, uint32_t dp);
double step_param_buffer_elements(const struct mdl_arch *a, const struct mdl_job *j,
				  uint32_t dp);
/* fp32 gradients a host-side optimizer keeps per trainable parameter: DeepSpeed holds them in
 * fp32 on the CPU or NVMe (Smart-Infinity Table I: backward writes 4 B/param, published.md
 * 9.3) [A]. */
#define HOST_GRAD_BYTES 4.0

enum step_where { W_GPU, W_DRAM, W_FLASH };
enum step_fetch { FETCH_RESIDENT, FETCH_GATHER, FETCH_STREAM };
enum step_grads { GRADS_LOCAL, GRADS_HOST };
enum step_update { UPD_GPU, UPD_CPU_AFTER, UPD_CPU_OVERLAP };
/* How host gradients leave the GPU: one copy down per micro-batch (COPY_PLAIN), or as
 * DeepSpeed's ZeRO-1/2 or ZeRO-3 offload copies them (step.c, grads_to_host) */
enum step_grads_copy { COPY_PLAIN, COPY_DS_ZERO2, COPY_DS_ZERO3 };

/* Placement a policy chooses. Fractions split a state between DRAM and flash (0..1 on flash). */
struct step_place {
	enum step_fetch fetch;
	double weights_on_flash;   /* streamed weights: fraction read from flash each pass */
	bool shard_stream;         /* streamed weights are ZeRO-3 shards: h2d 1/dp, then gather */
	enum step_where ckpt;      /* activation checkpoints: W_GPU, W_DRAM or W_FLASH (through
				    * pinned DRAM staging) */
	bool ckpt_sync;            /* W_DRAM checkpoints copied synchronously through pageable
				    * memory, on the compute stream (DeepSpeed's cpu_checkpointing:
				    * step_ckpt_variant) */
	enum step_grads grads;
	double grads_on_flash;     /* host gradients: fraction written to flash */
	double host_grad_bytes;    /* host gradients: bytes per parameter, 0 = HOST_GRAD_BYTES */
	enum step_grads_copy grads_copy; /* host gradients: how they go down (step.c) */
	enum step_update update;
	double opt_on_flash;       /* host optimizer state: fraction on flash */
	double opt_gpu;            /* UPD_CPU_AFTER: the share of the optimizer's parameters stepped
				    * on the GPU instead, their states and fp32 gradients kept there
				    * (DeepSpeed's Twin-Flow: step_twin_gpu_share) */
	bool pipe_read, pipe_write; /* UPD_CPU_AFTER: the next tile's flash read, the previous
				     * one's write, beside a tile's CPU step (DeepSpeed's
				     * pipeline_read / pipeline_write); UPD_CPU_OVERLAP does both */
	uint32_t prefetch;         /* weight buffers on the GPU (>= 1) */
	bool half_layers;          /* under full recompute, each layer is recomputed and
				    * back-propagated one half at a time (MLP, then attention
				    * recomputed again): the working set is the larger half */
	double dram_fixed;         /* pinned buffers and other DRAM the policy keeps, per node */
	bool dram_short;           /* state or checkpoints went to flash for want of DRAM: more
				    * DRAM would place them otherwise */
	double opt_paged;          /* a paged optimizer's states stepped on the GPU: the fraction
				    * the driver keeps in host DRAM (sim_run finds it) */
};

/* The host gradients' bytes per parameter of a placement (its host_grad_bytes, else
 * HOST_GRAD_BYTES). */
double step_host_grad_bytes(const struct step_place *pl);
/* Whether a placement keeps anything on the drives (weights, gradients, optimizer state or
 * checkpoints): only then are they part of the machine's power, as they are of what the
 * option buys (sim.c). */
bool step_uses_flash(const struct step_place *pl);

/* A GPU-to-GPU link that is no resource of its own: the GPU has no NVLink-class fabric and peer
 * traffic crosses its PCIe link (h2d and d2h). */
#define LINK_PCIE (-1)

/* The machine as engine resources, built once per configuration. */
struct step_machine {
	int sm[SIM_MAX_PP], hbm[SIM_MAX_PP], h2d[SIM_MAX_PP], d2h[SIM_MAX_PP];
	int pcie_pair[SIM_MAX_PP]; /* both directions together, when a profile measured less than
				    * their sum; -1 none */
	/* the staging of a synchronous copy from or to pageable memory (pl.ckpt_sync), each
	 * direction at step_pageable_rate; -1 none */
	int pg_h2d[SIM_MAX_PP], pg_d2h[SIM_MAX_PP];
	int tp_link[SIM_MAX_PP], pp_link[SIM_MAX_PP], net_link[SIM_MAX_PP];
	/* tp/pp links: LINK_PCIE when the GPU has no GPU-to-GPU fabric */
	int dram, nvme_rd, nvme_wr, cpu, sw_h2d, sw_d2h; /* sw: PCIe switch uplink, -1 none */
	int nvme;             /* the drives' one time budget for reads and writes, -1 none */
	float nvme_write_cost; /* a written byte's share of it against a read byte's */
	int s_comp[SIM_MAX_PP], s_comm[SIM_MAX_PP], s_p2p[SIM_MAX_PP], s_h2d[SIM_MAX_PP];
	int s_d2h[SIM_MAX_PP], s_tp[SIM_MAX_PP]; /* s_tp: only with tp_comm_overlap */
	int s_cp[SIM_MAX_PP];                    /* only with context parallelism */
	int s_ep[SIM_MAX_PP]; /* only under --ep-overlap: the hidden expert all-to-alls */
	int s_rep[SIM_MAX_PP]; /* only under hybrid sharding: the replicas' all-reduces */
	int s_gather[SIM_MAX_PP]; /* the weights' all-gathers, where a policy gathers them */
	int s_cpu, s_nvme, s_ckpt; /* CPU optimizer, NVMe weight reads, checkpoint I/O */
	int s_opt_rd, s_opt_wr;    /* a pipelined host update's state reads and writes */
	int gpu_pool[SIM_MAX_PP], dram_pool, flash_pool;
	uint32_t k;          /* GPUs per node in use: the representative's share of node resources */
	double tp_alpha, pp_alpha; /* collective step latency, s */
};

struct step_ctx {
	struct eng *e;
	const struct sim_workload *w;
	const struct mdl_hw *hw;
	const struct sim_config *c;
	struct mdl_job job;       /* the job as run (the policy may set recompute) */
	struct step_place pl;
	struct step_machine mc;
	uint64_t m, built;        /* micro-batches per step, micro-batches simulated */
	int mb_end[3];            /* last compute task of two steady micro-batches when built < m */
	/* each stage's last gradient reduction or copy of its last backward, where its update
	 * starts from: the step after the latest of them is the update's (sim.c) */
	int bwd_end[SIM_MAX_PP];
	uint64_t mb_span;         /* micro-batches from mb_end[0] to mb_end[1]: 1, or pp interleaved */
	/* build every micro-batch where their period was not steady: the resource whose queue
	 * grew from one mark to the next (sim.c, steady_period), -1 none, and by what share of
	 * the period */
	int unsteady;
	double unsteady_growth;
	/* the foldable passes in build order: the period (blocks) the engine found where it did
	 * not divide the gap, with STEP_FOLD_WIDE where its ramp or period needed more blocks
	 * before the gap than fold_edge's, STEP_FOLD_WHOLE for a pass built whole, 0 none of
	 * these (eng_fold) */
	uint8_t fold_unit[STEP_FOLD_PASSES];
	uint32_t nfold;           /* folds the build registered (eng_fold) */
	uint8_t fold_seg[ENG_FOLDS]; /* the pass of each */
	uint64_t fold_bwd;        /* the foldable passes that are backward passes (bit: by pass) */
	bool force;               /* no variant applied: place anyway, to report what overflows */
	/* build only the memory the step holds throughout, allocated at t = 0 (weights, gradients,
	 * optimizer state, the CUDA context): a run that stops where a GPU overflows needs no
	 * more when that alone overflows (sim_config.stop_unfit) */
	bool resident_only;
};

/* The DeepSpeed policies' two checkpoint placements: variant 0 keeps the checkpoints on the
 * GPU, variant 1 puts full recompute's in DRAM (cpu_checkpointing). Sets pl.ckpt; 1 when the
 * variant does not apply to the job's recompute, else 0. */
int step_ckpt_variant(struct step_ctx *x, int v);
/* Bytes/s of a synchronous copy up (h2d) or down through pageable host memory: a profile's
 * measured rate, else this project's one measured host's (step.c). */
double step_pageable_rate(const struct mdl_hw *hw, bool up);

/* Policies: 0 = tp 1 and pp 1 (data parallel only), else -1 naming the flag. */
int step_require_dp_only(const struct step_ctx *x, char *err, size_t errlen);

/* The GEMM efficiency a configuration runs at, as a share of the dense bf16 peak: its own; in
 * fp32, SIM_GEMM_EFFICIENCY of the fp32 peak; else 0.81 (the share a training step's GEMMs
 * sustain of a benchmark GEMM) of the profile's measured rate or of the GPU's published MAMF;
 * else SIM_GEMM_EFFICIENCY. c may be NULL. */
double step_gemm_efficiency(const struct sim_config *c, const struct mdl_hw *hw,
			    enum mdl_precision p);

/* The L2 that back-to-back memory-bound kernels hand their tensors on through (eager chains:
 * step.c, eager_chain): what a read-and-write kernel's arrays may hold and still hit it, bytes,
 * its rate, bytes/s, and each kernel's fixed time, seconds; a calibrated profile's measurement,
 * else the catalog's. False where neither has one. */
bool step_l2(const struct mdl_hw *hw, double *cache, double *rate, double *fixed);

/* Bytes/s the memory-bound kernels stream through device memory: the profile's measured rate,
 * else HBM_ACHIEVABLE (0.88) of the catalog's. */
double step_hbm_rate(const struct mdl_hw *hw);

/* How the share of the FP8 peak an FP8 GEMM reaches compares with the share of the bf16 peak a
 * bf16 GEMM reaches: where a profile measured the FP8 GEMMs (calibrate's cuda_gemm_fp8), such
 * that they sustain the same 0.81 of that benchmark rate the bf16 GEMMs sustain of theirs; else
 * gemm_mamf_fp8 / gemm_mamf where the catalog has both; else 1. */
double step_fp8_share(const struct mdl_hw *hw);

/* Seconds a matrix kernel costs beyond its FLOPs: the profile's fitted figure (calibrate's GEMM
 * test at two token counts), else STEP_MATMUL_FIXED. */
double step_matmul_fixed(const struct mdl_hw *hw);

/* The attention kernel's forward and backward rates over the dense bf16 peak: cuDNN's where the
 * job runs it and the catalog has its rate, FlashAttention in Triton's as FlashAttention-2's
 * slowed by what FlashAttention-2 gained over it, else FlashAttention-2's; a backward without its
 * own rate runs at the forward's. Returns the kernel whose rates they are ("cuDNN", "Triton
 * flash", "flash"), or NULL (rates unset) for eager attention, fp32 (precision p: the kernels
 * take 16-bit inputs only) or a GPU without them: its FLOPs then run at the GEMM rate. */
const char *step_attention_rates(const struct mdl_hw *hw, enum mdl_attention a,
				 enum mdl_precision p, double *fwd, double *bwd);

/* One micro-batch's FLOPs (mdl_job_flops) with the *_exec figures in FLOP-equivalents at the
 * GEMM rate gemm_eff: a flash-attention core at the GPU's flash_attention rate counts
 * gemm_eff / flash_attention of its FLOPs; FP8 linears their share of the FP8 rate; with
 * tp_overlap over tp > 1 ranks (--tp-comm-overlap) the GEMMs beside Transformer Engine's
 * collectives on the SMs those leave. */
void step_layer_flops(const struct mdl_arch *a, const struct mdl_job *j, const struct mdl_hw *hw,
		      double gemm_eff, uint32_t tp, bool tp_overlap, struct mdl_flops *f);

/* The seconds --tp-comm-overlap (overlap) adds to one decoder layer's forward and backward, per
 * GPU of a tp x cp group at GEMM efficiency gemm_eff, beyond the SM margin step_layer_flops
 * counts: each Transformer Engine collective pipelined with its one GEMM shows where it outlasts
 * it, and split GEMMs pay each chunk's kernel fill (step.c). 0 and 0 without the overlap, TP or
 * a known SM count. Dense linears only; their weight gradients only where they train. */
void step_ub_exposed(const struct mdl_arch *a, const struct mdl_job *j, const struct mdl_hw *hw,
		     double gemm_eff, uint32_t tp, uint32_t cp, bool overlap, double *fwd,
		     double *bwd);

/* Bytes one decoder layer's weights gather and hold less where FSDP gathers its dense linears
 * in FP8 (--fp8-all-gather, on): their parameters at one byte for the compute dtype's two. 0
 * unless on and the job runs fp8. */
double step_fp8_gathered_less(const struct mdl_arch *a, const struct mdl_job *j, bool on);

/*
 * HBM bytes Megatron-Core's alltoall token dispatcher copies in one pass of a mean layer (its
 * MoE layers' share), forward, and as many in backward, per GPU, beyond the activations the
 * layer keeps: its permute gathers each token's hidden state to its k experts before the
 * all-to-all (moe_utils.permute's index_select: the routed copies written and the tokens read
 * for them, a rank's all-to-all bytes each); where a rank holds more than one expert it sorts
 * what it received (and gathered over the expert TP ranks) by local expert and the experts'
 * output back (sort_chunks_by_idxs: a split into views and a cat, one copy each), and
 * SequentialMLP (--moe-gemm loop) concatenates its experts' outputs (torch.cat); backward runs
 * each the other way, a copy again (a split's gradient is a cat, an index_select's an
 * index_add) (megatron/core/transformer/moe/token_dispatcher.py MoEAlltoAllTokenDispatcher,
 * moe_utils.py, experts.py, Megatron-Core 0.10) [A: source]. Under expert parallelism only: at
 * ep 1 a MoE block is any framework's, whose gathers the activations count; the gather over the
 * expert TP ranks and the all-to-alls themselves are collectives, not these. 0 for a dense model.
 */
double step_moe_dispatch_bytes(const struct mdl_arch *a, const struct mdl_job *j,
			       const struct mdl_layout *l);

/* Weight buffers a streaming policy prefetches into by default: double buffering, one layer
 * computing while the next arrives (ZeRO-Infinity's prefetch, aiDAPTIV's streaming) [D]; FSDP's
 * rate limiter (limit_all_gathers, on by default) lets the same two all-gathers be in flight
 * before it waits on the oldest one's free (torch/distributed/fsdp/_limiter_utils.py,
 * _FreeEventQueue: _max_num_inflight_all_gathers = 2) [A: source]. */
#define STEP_PREFETCH 2
/* The configuration's prefetch depth (STEP_PREFETCH unless --prefetch set it) and the elements
 * of each reduce bucket (DeepSpeed's 5e8 unless --reduce-bucket or a config set it). */
uint32_t step_prefetch(const struct sim_config *c);
/* The GPUs of an n-GPU layout one node holds: all n up to the node's GPU count (hw
 * gpus_per_node, 1 where unset). A node's DRAM, drives and links serve that many. */
uint32_t step_node_gpus(const struct mdl_hw *hw, uint32_t n);
double step_reduce_bucket(const struct sim_config *c);

/* Seconds one micro-batch keeps a compute stream busy with `layers` decoder layers (forward,
 * backward and recompute), without the embedding, the head and anything a policy moves: the
 * GEMMs at gemm_eff of the dense peak and the memory-bound traffic at HBM speed (or the host's
 * kernel launches, if longer), the synchronous TP all-reduces (with tp_overlap,
 * --tp-comm-overlap: a block takes the longer of its compute, with what step_ub_exposed leaves
 * showing, and its TP collectives, so the stage at least the longer of their sums) and the
 * experts' all-to-alls, each uncontended, within a node and across nodes (with ep_overlap,
 * --ep-overlap: beside all the rest, the longer of the two). extra:
 * more GPU seconds in the same compute blocks (the head); rc_share: the share of the layers
 * that run j's recompute mode, the rest none (--recompute-layers; 1: all). The builder's tasks
 * take at least this long, so it is a floor a search can prune with. */
double step_stage_floor(const struct mdl_arch *a, const struct mdl_job *j,
			const struct mdl_layout *l, const struct mdl_hw *hw, double gemm_eff,
			double layers, double rc_share, double extra, bool tp_overlap,
			bool ep_overlap, bool ep_dedup);
/*
 * What one expert dispatch (or combine) of layout l puts on each GPU's links, as shares of the
 * bytes of its routed copies (a token's hidden state once per expert it is routed to): *in to
 * the expert-parallel ranks in its node over NVLink, *out to those in other nodes over its
 * network link (0 within one node); the same comes back. Without dedup, Megatron-Core's
 * alltoall dispatcher: a copy per (token, expert) pair, split among the ep ranks by where
 * their experts are (token_dispatcher.py, MoEAlltoAllTokenDispatcher: input_splits are the
 * local tokens per expert summed over each rank's experts), (n - 1)/ep of them to the node's
 * other n - 1 ranks and (ep - n)/ep across [A: source]. With dedup, its flex dispatcher
 * (fused_a2a.py: DeepEP's get_dispatch_layout gives is_token_in_rank and
 * num_tokens_per_rdma_rank, the dispatch sends a token once to each rank that holds any of its
 * experts) and DeepEP's internode kernels (csrc/kernels/internode.cu: a token crosses the
 * network once to each node holding one of its experts, to the rank of the same local index,
 * which forwards it over NVLink to the ranks there that need it: SourceMeta's
 * is_token_in_nvl_rank bits) [A: source]; Megatron-Core's MoE README: DeepEP "removes redundant
 * tokens during cross-node communication", HybridEP is NVIDIA's kernel of the same scheme.
 * Routing taken as uniform over the experts (forced balance: Megatron-Core's
 * moe_router_force_load_balancing, the performance recipes'): a rank holding E/ep of the E
 * experts takes a token of top k with chance 1 - C(E - E/ep, k)/C(E, k), a node of N with E/N
 * of them 1 - C(E - E/N, k)/C(E, k); so per token (N - 1) node copies cross the network and
 * each rank of the ep - N that are not the receiving one of their node takes one over NVLink
 * at its chance. Node-limited routing (DeepSeek-V3's topk_group) would send fewer across; not
 * modelled.
 */
void step_ep_wire(const struct mdl_arch *a, const struct mdl_hw *hw, const struct mdl_layout *l,
		  bool dedup, double *in, double *out);

/* Seconds the data-parallel collectives of one step keep a GPU's collective stream busy under
 * the gpu policy with m micro-batches (gradient all-reduce or reduce-scatters, ZeRO's weight
 * all-gathers), each at its uncontended duration and with one latency per pass: the step lasts
 * at least this long. 0 where it does not bound (context parallelism, one rank). */
double step_dp_floor(const struct mdl_arch *a, const struct mdl_job *j,
		     const struct mdl_layout *l, const struct mdl_hw *hw, uint64_t m);

/* Builds the machine and the step for the context's placement. 0 ok, -1 + err. */
int step_build(struct step_ctx *x, char *err, size_t errlen);
/* Parameters of one DeepSpeed optimizer sub-group: the config's sub_group_size, else
 * STEP_SUB_GROUP. */
double step_sub_group(const struct sim_config *c);
/* The share of a rank's shard of trainable parameters whose optimizer sub-groups DeepSpeed's
 * Twin-Flow keeps and steps on the GPU (--offload-ratio; sim_config.twin_gpu): 0 to 1. */
double step_twin_gpu_share(const struct sim_config *c, double shard);
/* Gradient copies of gb bytes a block (of the layer's parameters) may have in flight to the host
 * before backward waits, and host buffers the last backward fills before it waits for the host:
 * the reduce buckets' worth, 2 to 16. */
uint32_t step_grads_inflight(const struct sim_config *c, const struct mdl_states *layer,
			     double gb);

#endif
