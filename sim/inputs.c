/* inputs — see opts.h: the command line resolved into workload, hardware and economics. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/act.h"
#include "../model/catalog.h"
#include "../model/file.h"
#include "opts.h"
#include "plan.h"
#include "sim.h"
#include "step.h"

/* "pm1743:4" -> name and count; 0 ok, -1 + err. */
static int parse_flash(const char *arg, char *name, size_t n, uint32_t *count, char *err,
		       size_t errlen)
{
	const char *colon = strrchr(arg, ':');
	char *end;
	long c = 1;

	if (*arg && strspn(arg, "0123456789") == strlen(arg)) { /* a count without its drive */
		snprintf(err, errlen,
			 "--flash: '%s' names no drive: the count follows the drive's name "
			 "(--flash %s:%s; 'tierplan hardware' lists the drives), or none",
			 arg, TP_FLASH_DEFAULT, arg);
		return -1;
	}
	if (colon && !strchr(colon, '/')) {
		c = strtol(colon + 1, &end, 10);
		if (end == colon + 1 || *end || c < 1 || c > 1024) {
			snprintf(err, errlen,
				 "--flash: drive count in '%s' must be 1 to 1024 (no drives: --flash "
				 "none)",
				 arg);
			return -1;
		}
		snprintf(name, n, "%.*s", (int)(colon - arg), arg);
	} else {
		snprintf(name, n, "%s", arg);
	}
	*count = (uint32_t)c;
	return 0;
}

/* A setting of two names, a or b: *second whether it is b. 0 ok, -1 with err naming the flag and
 * both names. */
static int either(const char *flag, const char *v, const char *a, const char *b, bool *second,
		  char *err, size_t errlen)
{
	if (strcmp(v, a) && strcmp(v, b))
		return snprintf(err, errlen, "%s: '%s' (allowed: %s, %s)", flag, v, a, b), -1;
	*second = !strcmp(v, b);
	return 0;
}

int tp_yes_no(const char *flag, const char *v, bool *yes, char *err, size_t errlen)
{
	bool no;
	if (either(flag, v, "yes", "no", &no, err, errlen))
		return -1;
	*yes = !no;
	return 0;
}

/* A yes|no setting that may be left to `automatic` with auto. 0 ok, -1 with err. */
static int auto_yes_no(const char *flag, const char *v, bool automatic, bool *yes, char *err,
		       size_t errlen)
{
	if (!strcmp(v, "auto")) {
		*yes = automatic;
		return 0;
	}
	if (strcmp(v, "yes") && strcmp(v, "no"))
		return snprintf(err, errlen, "%s: '%s' (allowed: auto, yes, no)", flag, v), -1;
	*yes = v[0] == 'y';
	return 0;
}

/* Whether --method qlora takes GPTQ base weights because the config is a GPTQ checkpoint's
 * (quantization_config quant_method gptq) and --quant did not say otherwise. */
static bool gptq_config(const struct tp_opts *o, const struct sim_workload *w)
{
	return w->job.method == MDL_QLORA && !tp_opts_given(o, "quant") &&
	       !strcmp(w->arch.quant_method, "gptq");
}

/* --quant-head, --quant-from and --double-quant into w's job: a bitsandbytes QLoRA base's own
 * untied head, which the loss calls as a module (the chunked loss's kernel reads the head's
 * weight itself), the dtype it was quantised from, and its NF4 constants. 0 ok, -1 with err. */
static int bnb_flags(const struct tp_opts *o, struct sim_workload *w, char *err, size_t errlen)
{
	bool dq;
	if (tp_yes_no("--quant-head", o->quant_head, &w->job.quant_head, err, errlen) ||
	    tp_yes_no("--double-quant", o->double_quant, &dq, err, errlen))
		return -1;
	w->job.plain_nf4 = !dq;
	if (!dq && !mdl_job_bnb(&w->job)) {
		snprintf(err, errlen, "--double-quant no: NF4's block constants, of a bitsandbytes "
				      "QLoRA base (--method qlora --quant nf4|nf4-legacy)");
		return -1;
	}
	const char *from = o->quant_from;
	bool fp16 = !strcmp(from, mdl_quant_from_name(true)), automatic = !strcmp(from, "auto");
	if (!fp16 && !automatic && strcmp(from, mdl_quant_from_name(false))) {
		snprintf(err, errlen, "--quant-from: '%s' (allowed: auto, %s, %s)", from,
			 mdl_quant_from_name(false), mdl_quant_from_name(true));
		return -1;
	}
	w->job.quant_fp16 = fp16 || (automatic && w->job.quant_head);
	if (fp16 && !mdl_job_bnb(&w->job)) {
		snprintf(err, errlen, "--quant-from fp16: the dtype a bitsandbytes QLoRA base was "
				      "quantised from (--method qlora --quant nf4|nf4-legacy)");
		return -1;
	}
	if (!w->job.quant_head)
		return 0;
	const char *why = NULL;
	if (!mdl_job_bnb(&w->job))
		why = "needs a bitsandbytes QLoRA base (--method qlora --quant nf4|nf4-legacy)";
	else if (w->arch.tied)
		why = "the model's head is its embedding's weight (tied), which stays unquantised";
	else if (w->job.lora_targets & MDL_T_HEAD)
		why = "--lora-targets trains the head whole";
	else if (mdl_job_upcast(&w->job) == MDL_UPCAST_ALL)
		why = "--kbit-upcast all casts the head to fp32 (PEFT's "
		      "prepare_model_for_kbit_training); a quantised head with the rest upcast is "
		      "not modelled (use --kbit-upcast none or norms)";
	else if (tp_opts_given(o, "loss") && w->job.loss == MDL_LOSS_CHUNKED)
		why = "--loss chunked's kernel reads the head's weight itself (use full, "
		      "chunked-output or fused)";
	if (why)
		snprintf(err, errlen, "--quant-head yes: %s", why);
	return why ? -1 : 0;
}

/* ALiBi (BLOOM): transformers' BloomAttention scores every query-key pair explicitly (baddbmm
 * with the biases, softmax, dropout; BloomPreTrainedModel declares no fused kernel), as
 * Megatron-DeepSpeed's fused softmax did for BLOOM's own training: eager, unless --attention
 * says the framework hands ALiBi slopes to FlashAttention-2 (flash-attn 2.4.2 and later, as
 * llm-foundry's check_alibi_support requires). Whether that default applies. */
static bool alibi_eager(const struct tp_opts *o, const struct sim_workload *w)
{
	return w->arch.alibi && !tp_opts_given(o, "attention");
}

int tp_inputs(const struct tp_opts *o, struct sim_workload *w, struct mdl_hw *hw,
	      struct sim_econ *econ, char *name, size_t namelen, char *path, size_t pathlen,
	      char *err, size_t errlen)
{
	char flash_name[256];

	/* model; a quantised release's name stands for the quantization_config its checkpoint has
	 * (GPTQ's: 4 or 8 bits, GPTQConfig's default group size, no act order) */
	struct cfg_quant_name q;
	if (cfg_model_resolve(o->model, path, pathlen, name, namelen, &q, err, errlen) < 0 ||
	    mdl_arch_load(path, &w->arch, err, errlen) < 0) {
		return EXIT_INVALID;
	}
	if (q.method[0] && !w->arch.quant_method[0]) {
		snprintf(w->arch.quant_method, sizeof w->arch.quant_method, "%s", q.method);
		w->arch.quant_bits = q.bits;
		w->arch.quant_group = MDL_GPTQ_GROUP;
		w->arch.quant_desc_act = false;
		w->arch.quant_named = true;
	}
	/* job */
	w->job = (struct mdl_job){
		.method = o->method,
		.lora_rank = (uint32_t)o->lora_rank,
		.lora_targets = o->lora_targets,
		.precision = o->precision,
		.optimizer = o->optimizer,
		.recompute = o->recompute < 0 ? MDL_RC_FULL : o->recompute,
		.attention = o->attention,
		.loss = o->loss < 0 ? MDL_LOSS_FULL : (enum mdl_loss)o->loss,
		.grad_dtype = (enum mdl_grad_dtype)o->grad_dtype,
		.master = (enum mdl_master)o->master,
		.seq = o->seq,
		.micro_batch = o->batch,
		.lora_dropout = o->lora_dropout,
		.doc_tokens = o->doc_tokens,
		.quant = (enum mdl_quant)o->quant,
		.upcast = (enum mdl_upcast)o->kbit_upcast,
		.lora_fp32 = o->lora_dtype == 1,
		.fused_lora = o->lora_kernels == 1,
	    .recompute_layers = (uint32_t)o->recompute_layers,
	};
	if (mdl_rc_modules_parse(o->recompute_modules, &w->job.recompute_modules, err, errlen))
		return EXIT_INVALID;
	if (tp_opts_given(o, "recompute-modules") && o->recompute >= 0 &&
	    o->recompute != MDL_RC_SELECTIVE) {
		snprintf(err, errlen,
			 "--recompute-modules %s: what --recompute selective (or auto) makes "
			 "again, not %s",
			 o->recompute_modules, mdl_recompute_name(o->recompute));
		return EXIT_INVALID;
	}
	if (o->recompute_layers && o->recompute != MDL_RC_FULL) {
		snprintf(err, errlen,
			 "--recompute-layers %llu: the layers of each pipeline chunk that recompute "
			 "under --recompute full (Megatron-Core's block method), not %s",
			 (unsigned long long)o->recompute_layers,
			 o->recompute < 0 ? "auto" : mdl_recompute_name(o->recompute));
		return EXIT_INVALID;
	}
	/* the remainder completes bf16 weights to fp32; fp16's and fp32's are no such half */
	if (w->job.master == MDL_MASTER_REMAINDER && w->job.precision != MDL_BF16_MIXED &&
	    w->job.precision != MDL_FP8) {
		snprintf(err, errlen,
			 "--master-weights remainder: the low halves of bf16 weights' fp32 masters "
			 "(--precision bf16-mixed or fp8), not %s",
			 mdl_precision_name(w->job.precision));
		return EXIT_INVALID;
	}
	if (tp_opts_given(o, "quant") && w->job.method != MDL_QLORA) {
		snprintf(err, errlen,
			 "--quant %s: the base weights' format of --method qlora, not %s",
			 mdl_quant_name(w->job.quant), mdl_method_name(w->job.method));
		return EXIT_INVALID;
	}
	/* the adapters' flags describe --method lora|qlora: on a full fine-tune they would be
	 * dropped without a word, and the job is not the one the user meant */
	static const char *const adapter_flags[] = {"lora-rank", "lora-targets", "lora-dropout",
						    "lora-dtype", "dora", "lora-kernels"};
	size_t nadapter = sizeof adapter_flags / sizeof *adapter_flags;
	if (w->job.method != MDL_FULL)
		nadapter = 0;
	for (size_t i = 0; i < nadapter; i++)
		if (tp_opts_given(o, adapter_flags[i])) {
			snprintf(err, errlen,
				 "--%s: the adapters of --method lora or qlora, not of a full "
				 "fine-tune (add --method lora, or drop --%s)",
				 adapter_flags[i], adapter_flags[i]);
			return EXIT_INVALID;
		}
	if (gptq_config(o, w))
		w->job.quant = MDL_QUANT_GPTQ;
	w->job.quant_group = MDL_GPTQ_GROUP;
	if (!strcmp(w->arch.quant_method, "gptq") && w->job.quant == MDL_QUANT_GPTQ) {
		/* the checkpoint's own: its group size and act order */
		if (w->arch.quant_bits != 4) {
			snprintf(err, errlen, "--quant gptq: %s %u bits; 4-bit GPTQ is modelled",
				 w->arch.quant_named ? "the checkpoint's name says"
						     : "the config's quantization_config has",
				 w->arch.quant_bits);
			return EXIT_INVALID;
		}
		w->job.quant_group = w->arch.quant_group;
		w->job.quant_desc_act = w->arch.quant_desc_act;
	}
	if (w->job.upcast != MDL_UPCAST_NONE && mdl_job_upcast(&w->job) == MDL_UPCAST_NONE) {
		snprintf(err, errlen,
			 "--kbit-upcast %s: what a bitsandbytes QLoRA base (--method qlora --quant "
			 "nf4|nf4-legacy) keeps in fp32, not %s%s%s",
			 mdl_upcast_name(w->job.upcast), mdl_method_name(w->job.method),
			 w->job.method == MDL_QLORA ? " on " : "",
			 w->job.method == MDL_QLORA ? mdl_quant_name(w->job.quant) : "");
		return EXIT_INVALID;
	}
	if (bnb_flags(o, w, err, errlen))
		return EXIT_INVALID;
	if (alibi_eager(o, w))
		w->job.attention = MDL_ATTN_EAGER;
	if (o->doc_tokens > o->seq) {
		snprintf(err, errlen,
			 "--doc-tokens: %llu tokens is longer than --seq %llu (allowed: 0 to %llu)",
			 (unsigned long long)o->doc_tokens, (unsigned long long)o->seq,
			 (unsigned long long)o->seq);
		return EXIT_INVALID;
	}
	if (tp_yes_no("--compile", o->compile, &w->job.compile, err, errlen) ||
	    tp_yes_no("--dora", o->dora, &w->job.dora, err, errlen))
		return EXIT_INVALID;
	/* Unsloth patches its fused LoRA functions in only without dropout or DoRA
	 * (unsloth/models/llama.py, get_peft_model and its O/QKV/MLP checks), and its
	 * fast_dequantize reads bitsandbytes' 4-bit blocks [A: source] */
	if (w->job.fused_lora && (w->job.lora_dropout > 0 || w->job.dora ||
				  (w->job.method == MDL_QLORA && !mdl_job_bnb(&w->job)))) {
		snprintf(err, errlen,
			 "--lora-kernels unsloth: Unsloth patches its fused LoRA functions in only "
			 "with --lora-dropout 0, without --dora and on a bitsandbytes 4-bit base "
			 "(--quant nf4); %s",
			 w->job.lora_dropout > 0 ? "drop --lora-dropout"
			 : w->job.dora		 ? "drop --dora"
						 : "use --quant nf4");
		return EXIT_INVALID;
	}
	/* PEFT's GPTQ LoRA layer refuses use_dora ("does not support DoRA yet":
	 * peft/tuners/lora/gptq.py at 5d602fd) [A: source] */
	if (w->job.dora && mdl_job_gptq(&w->job)) {
		snprintf(err, errlen,
			 "--dora yes: PEFT's GPTQ layers do not run DoRA (--quant nf4, nf4-legacy "
			 "or nf4-torchao, or --method lora)");
		return EXIT_INVALID;
	}
	if (auto_yes_no("--fused-qkv", o->fused_qkv, w->arch.fused_qkv, &w->job.fused_qkv, err,
			errlen) ||
	    auto_yes_no("--repeat-kv", o->repeat_kv, mdl_act_repeat_kv_auto(&w->arch, &w->job),
			&w->job.repeat_kv, err, errlen))
		return EXIT_INVALID;
	if (strcmp(o->fp8_recipe, "auto") && strcmp(o->fp8_recipe, "te") &&
	    strcmp(o->fp8_recipe, "torchao")) {
		snprintf(err, errlen, "--fp8-recipe: '%s' (allowed: auto, te, torchao)",
			 o->fp8_recipe);
		return EXIT_INVALID;
	}
	bool fp8_gather = !strcmp(o->fp8_all_gather, "yes");
	if (strcmp(o->fp8_recipe, "auto") && w->job.precision != MDL_FP8) {
		snprintf(err, errlen, "--fp8-recipe %s: whose FP8 training --precision fp8 runs, "
				      "not %s",
			 o->fp8_recipe, mdl_precision_name(w->job.precision));
		return EXIT_INVALID;
	}
	if (!strcmp(o->fp8_recipe, "te") && fp8_gather) {
		snprintf(err, errlen, "--fp8-recipe te with --fp8-all-gather yes: the FP8 "
				      "all-gather is torchao's (--fp8-recipe torchao)");
		return EXIT_INVALID;
	}
	w->job.fp8_recipe = !strcmp(o->fp8_recipe, "torchao") || (!strcmp(o->fp8_recipe, "auto") &&
								  fp8_gather)
				    ? MDL_FP8_TORCHAO
				    : MDL_FP8_TE;
	if (either("--moe-gemm", o->moe_gemm, "loop", "grouped", &w->job.grouped_experts, err,
		   errlen) ||
	    either("--pointwise", o->pointwise, "fused", "eager", &w->job.eager_ops, err, errlen))
		return EXIT_INVALID;
	/* as Megatron-Core asserts them (transformer_config.py): "moe_act in recompute_modules is
	 * only supported with moe_grouped_gemm", "mla_up_proj ... only supported with
	 * multi_latent_attention" */
	unsigned rm = w->job.recompute_modules;
	if ((rm & MDL_RM_MOE_ACT) && !(w->arch.experts && w->job.grouped_experts)) {
		snprintf(err, errlen,
			 "--recompute-modules moe_act: the routed experts' activation under grouped "
			 "GEMMs, as Megatron-Core asserts (%s%s)",
			 name, w->arch.experts ? ": add --moe-gemm grouped" : " has no experts");
		return EXIT_INVALID;
	}
	if ((rm & MDL_RM_MLA_UP) && !w->arch.kv_lora_rank) {
		snprintf(err, errlen,
			 "--recompute-modules mla_up_proj: the up-projections of multi-latent "
			 "attention (DeepSeek's), which %s does not have",
			 name);
		return EXIT_INVALID;
	}
	w->job.fused_glu = o->swiglu == 0;
	if (w->job.fused_glu && !w->arch.gated_mlp) {
		snprintf(err, errlen, "--swiglu fused: %s's MLP is not gated (no SwiGLU or GeGLU "
				      "to fuse)",
			 name);
		return EXIT_INVALID;
	}
	if (either("--logits-upcast", o->logits_upcast, "loss", "model", &w->job.upcast_in_model,
		   err, errlen))
		return EXIT_INVALID;
	/* where the cast happens matters only to the unchunked losses that cast (auto: full on
	 * the GPU-only and DeepSpeed policies; chunked on the tiered ones, where it is moot) */
	if (w->job.upcast_in_model && tp_opts_given(o, "loss") && !mdl_loss_upcasts(w->job.loss)) {
		snprintf(err, errlen,
			 "--logits-upcast model: where the logits of --loss full or fused-fp32 are "
			 "cast to fp32, not of --loss %s",
			 mdl_loss_name(w->job.loss));
		return EXIT_INVALID;
	}
	if (w->job.upcast_in_model && w->job.compile) {
		snprintf(err, errlen, "--logits-upcast model with --compile yes: the compiled loss "
				      "keeps no compute-dtype logits wherever the cast is written "
				      "(drop one)");
		return EXIT_INVALID;
	}
	if (tp_yes_no("--checkpoint-early-stop", o->checkpoint_early_stop,
		      &w->job.recompute_early_stop, err, errlen))
		return EXIT_INVALID;
	if (w->job.recompute_early_stop && o->recompute >= 0 && o->recompute != MDL_RC_FULL) {
		snprintf(err, errlen,
			 "--checkpoint-early-stop yes: where a --recompute full checkpoint stops "
			 "its recompute, not --recompute %s",
			 mdl_recompute_name(o->recompute));
		return EXIT_INVALID;
	}
	if (w->job.recompute_early_stop && !strcmp(o->checkpoint_wrap, "outside")) {
		snprintf(err, errlen,
			 "--checkpoint-early-stop yes with --checkpoint-wrap outside: transformers' "
			 "reentrant checkpoint around FSDP's units runs the whole forward again (a "
			 "non-reentrant one outside is as inside: --checkpoint-wrap inside)");
		return EXIT_INVALID;
	}
	if (w->job.eager_ops && w->job.compile) {
		snprintf(err, errlen, "--pointwise eager with --compile yes: torch.compile fuses "
				      "the norms and rotary embeddings (give one or the other)");
		return EXIT_INVALID;
	}
	if (tp_opts_given(o, "grad-accum") && tp_opts_given(o, "global-batch")) {
		return snprintf(err, errlen, "give --grad-accum or --global-batch, not both"), EXIT_USAGE;
	}
	w->grad_accum = tp_opts_given(o, "grad-accum") ? o->grad_accum : 0;
	/* a DeepSpeed config's train_batch_size the micro-batch or accumulation derive from
	 * (dsconfig.h) is the global batch of every layout plan tries */
	w->global_batch = o->ds.derive && !tp_opts_given(o, "global-batch")
				  ? o->ds.train_batch_size
				  : o->global_batch;
	w->tokens = o->tokens;
	if (tp_opts_given(o, "epochs") != tp_opts_given(o, "dataset-tokens")) {
		return snprintf(err, errlen, "--epochs and --dataset-tokens go together"), EXIT_USAGE;
	}
	if (tp_opts_given(o, "epochs")) {
		if (tp_opts_given(o, "tokens")) {
			return snprintf(err, errlen, "give --tokens or --epochs with --dataset-tokens, not both"), EXIT_USAGE;
		}
		w->tokens = o->epochs * o->dataset_tokens;
		if (!(w->tokens >= 1 && w->tokens <= TP_MAX_TOKENS)) {
			return snprintf(err, errlen, "--epochs x --dataset-tokens must be 1 to %.0e tokens, got %.3g",
					TP_MAX_TOKENS, w->tokens),
			       EXIT_INVALID;
		}
	}
	/* hardware */
	memset(hw, 0, sizeof *hw);
	cfg_set_prices(o->prices);
	if (cfg_gpu_get(o->gpu, &hw->gpu, err, errlen) < 0)
		return EXIT_INVALID;
	/* --host auto: the node the GPU's catalog entry names, else the stand-in */
	hw->host_auto = strcmp(o->host, "auto") == 0;
	const char *host = !hw->host_auto ? o->host
			   : hw->gpu.host[0] ? hw->gpu.host
					     : CFG_HOST_STAND_IN;
	if (cfg_host_get(host, &hw->host, err, errlen) < 0) {
		if (hw->host_auto) { /* a GPU file naming a host the catalog lacks */
			char why[256];
			snprintf(why, sizeof why, "%s", err);
			snprintf(err, errlen, "gpu %s's host (--host auto): %s", hw->gpu.name, why);
		}
		return EXIT_INVALID;
	}
	/* a layout of more GPUs than the usual node holds, where that node has no network (the
	 * RTX cards' 4-GPU workstation; 8-card PCIe servers of them exist): an 8-GPU server stands
	 * in, and the output says so */
	uint64_t want = tp_opts_given(o, "gpus") ? o->gpus
			: tp_opts_given(o, "dp") ? o->tp * o->pp * o->cp * o->dp
						   : 0;
	if (hw->host_auto && !(hw->host.network_per_gpu > 0) && !o->gpus_per_node &&
	    want > hw->host.gpu_slots) {
		hw->host_fallback = hw->host.gpu_slots;
		if (cfg_host_get(CFG_HOST_STAND_IN, &hw->host, err, errlen) < 0)
			return EXIT_INVALID;
	}
	if (strcmp(o->flash, "none") == 0) { /* no drives: the host tiers end at DRAM */
		snprintf(hw->flash.name, sizeof hw->flash.name, "none");
		snprintf(hw->flash.description, sizeof hw->flash.description, "no flash drives");
	} else if (parse_flash(o->flash, flash_name, sizeof flash_name, &hw->flash_count, err,
			       errlen) < 0 ||
		   cfg_flash_get(flash_name, &hw->flash, err, errlen) < 0) {
		return EXIT_INVALID;
	}
	/* a GPU without bf16 (Volta, Turing) trains fp16 with loss scaling: the default precision
	 * becomes fp16-mixed there (HF Trainer refuses bf16 on it; Unsloth switches), and a bf16
	 * precision asked for is refused */
	bool bf16 = w->job.precision == MDL_BF16_MIXED || w->job.precision == MDL_BF16;
	if (hw->gpu.fp16_only > 0 && bf16) {
		if (tp_opts_given(o, "precision")) {
			snprintf(err, errlen,
				 "--precision %s: gpu %s has no bf16 tensor cores (Volta and Turing "
				 "have fp16 only); use --precision fp16-mixed or fp32",
				 mdl_precision_name(w->job.precision), hw->gpu.name);
			return EXIT_INVALID;
		}
		w->job.precision = MDL_FP16_MIXED;
	}
	/* a node holds the GPUs its host has slots for: more would share one host's price, CPUs,
	 * DRAM and PCIe switches among GPUs it cannot seat */
	if (o->gpus_per_node > hw->host.gpu_slots) {
		snprintf(err, errlen,
			 "--gpus-per-node: %llu GPUs, but host '%s' has %.0f GPU slots "
			 "(allowed 0-%.0f, 0 for all of them; a node with more is another --host, "
			 "see 'tierplan hardware', or a --host FILE with its gpu_slots)",
			 (unsigned long long)o->gpus_per_node, hw->host.name, hw->host.gpu_slots,
			 hw->host.gpu_slots);
		return EXIT_INVALID;
	}
	hw->gpus_per_node = o->gpus_per_node ? (uint32_t)o->gpus_per_node : (uint32_t)hw->host.gpu_slots;
	/* --gpu-headroom: plan into what is left */
	hw->gpu_headroom = o->gpu_headroom;
	hw->gpu.memory *= 1 - o->gpu_headroom;
	hw->dram = o->dram > 0 ? o->dram : hw->host.dram;
	hw->dram_set = o->dram > 0;
	if (hw->dram > hw->host.dram_max) {
		snprintf(err, errlen,
			 "--dram: %.0f GiB is more than host '%s' takes (allowed up to %.0f GiB, "
			 "its dram_max; another node is a --host FILE)",
			 hw->dram / 1073741824.0, hw->host.name, hw->host.dram_max / 1073741824.0);
		return EXIT_INVALID;
	}
	/* the default array on a host with fewer bays: the bays it has (a host without NVMe runs
	 * without drives); drives the user asked for must fit */
	if (!tp_opts_given(o, "flash") && hw->flash_count > hw->host.flash_bays)
		hw->flash_count = (uint32_t)hw->host.flash_bays;
	if (hw->flash_count > hw->host.flash_bays) {
		snprintf(err, errlen,
			 "--flash: %u drives, but host '%s' has %.0f bays (allowed 0-%.0f; a host "
			 "with more, e.g. an add-in NVMe carrier, is a --host FILE with its "
			 "flash_bays)",
			 hw->flash_count, hw->host.name, hw->host.flash_bays, hw->host.flash_bays);
		return EXIT_INVALID;
	}
	if (o->profile && mdl_profile_apply(o->profile, hw, err, errlen))
		return EXIT_INVALID;
	*econ = (struct sim_econ){o->amortize_years, o->pue, o->usd_per_kwh};
	return 0;
}

int tp_framework_config(const struct tp_opts *o, const struct sim_workload *w,
			struct sim_config *c, char *err, size_t errlen)
{
	bool overlap_grad, clip;
	if (tp_yes_no("--overlap-grad-reduce", o->overlap_grad_reduce, &overlap_grad, err, errlen) ||
	    tp_yes_no("--clip-grad", o->clip_grad, &clip, err, errlen) ||
	    tp_yes_no("--foreach-optimizer", o->foreach_optimizer, &c->opt_foreach, err, errlen) ||
	    tp_yes_no("--optimizer-in-backward", o->optimizer_in_backward, &c->opt_in_bwd, err,
		   errlen) ||
	    tp_yes_no("--activation-offload", o->activation_offload, &c->act_offload, err, errlen) ||
	    tp_yes_no("--tp-comm-overlap", o->tp_comm_overlap, &c->tp_comm_overlap, err, errlen) ||
	    tp_yes_no("--ep-overlap", o->ep_overlap, &c->ep_overlap, err, errlen) ||
	    tp_yes_no("--shared-expert-overlap", o->shared_expert_overlap, &c->shared_overlap, err,
		      errlen) ||
	    tp_yes_no("--fp8-all-gather", o->fp8_all_gather, &c->fp8_all_gather, err, errlen) ||
	    tp_yes_no("--overlap-param-gather", o->overlap_param_gather, &c->overlap_param_gather,
		      err, errlen))
		return EXIT_INVALID;
	if (c->shared_overlap && (!w->arch.shared_experts || c->ep_overlap))
		return snprintf(err, errlen,
				"--shared-expert-overlap yes runs a model's shared experts beside "
				"its expert all-to-alls, not with --ep-overlap yes, as "
				"Megatron-Core asserts (%s: %u shared experts, --ep-overlap %s)",
				w->arch.name, w->arch.shared_experts, c->ep_overlap ? "yes" : "no"),
		       EXIT_INVALID;
	c->act_offload_layers = (uint32_t)o->activation_offload_layers;
	if (c->act_offload_layers && !c->act_offload)
		return snprintf(err, errlen,
				"--activation-offload-layers %llu limits --activation-offload to "
				"the first layers of each stage: give --activation-offload yes "
				"with it (0: every layer)",
				(unsigned long long)o->activation_offload_layers),
		       EXIT_INVALID;
	c->no_grad_overlap = !overlap_grad;
	if (c->overlap_param_gather && o->deepspeed)
		return snprintf(err, errlen,
				"--overlap-param-gather is Megatron-Core's distributed optimizer: "
				"DeepSpeed's ZeRO-1/2 all-gather after the optimizer step "
				"(--deepspeed %s)",
				o->deepspeed),
		       EXIT_INVALID;
	if (c->overlap_param_gather && c->no_grad_overlap)
		return snprintf(err, errlen,
				"--overlap-param-gather yes needs --overlap-grad-reduce yes "
				"(Megatron-LM: 'Must use --overlap-param-gather with "
				"--overlap-grad-reduce')"),
		       EXIT_INVALID;
	c->no_clip_grad = !clip;
	c->twin_gpu = 1.0 - o->offload_ratio;
	c->prefetch = (uint32_t)o->prefetch;
	if (either("--backward-prefetch", o->backward_prefetch, "pre", "post",
		   &c->bwd_prefetch_post, err, errlen) ||
	    either("--checkpoint-wrap", o->checkpoint_wrap, "inside", "outside", &c->ckpt_outside,
		   err, errlen) ||
	    either("--grad-sync", o->grad_sync, "each", "last", &c->grad_sync_last, err, errlen))
		return EXIT_INVALID;
	/* DeepSpeed's engine asserts that its no_sync is "incompatible with gradient
	 * partitioning logic of ZeRO stage 2/3" (runtime/engine.py, no_sync), and the Trainer
	 * never calls it under DeepSpeed (trainer.py: sync_context) */
	if (c->grad_sync_last && o->deepspeed)
		return snprintf(err, errlen,
				"--grad-sync last is FSDP's no_sync; DeepSpeed reduces every "
				"micro-batch's gradients under ZeRO-2/3 and refuses no_sync "
				"(--deepspeed %s)",
				o->deepspeed),
		       EXIT_INVALID;
	if (sim_cpu_ckpt_parse(o->cpu_checkpointing, c))
		return snprintf(err, errlen, "--cpu-checkpointing: '%s' (allowed: auto, yes, no)",
				o->cpu_checkpointing),
		       EXIT_INVALID;
	/* only full recompute keeps checkpoints for DeepSpeed to move */
	if (c->cpu_ckpt == SIM_CPU_CKPT_YES && w->job.recompute != MDL_RC_FULL &&
	    tp_opts_given(o, "recompute"))
		return snprintf(err, errlen,
				"--cpu-checkpointing yes moves full recompute's checkpoints: "
				"--recompute full or auto (got %s)",
				mdl_recompute_name(w->job.recompute)),
		       EXIT_INVALID;
	if (either("--weights-up", o->weights_up, "after", "in-step", &c->weights_in_step, err,
		   errlen))
		return EXIT_INVALID;
	if (either("--graph-freed", o->graph_freed, "backward", "next-forward", &c->graph_next_fwd,
		   err, errlen))
		return EXIT_INVALID;
	if (c->weights_in_step && w->job.precision != MDL_FP16_MIXED)
		return snprintf(err, errlen,
				"--weights-up in-step is DeepSpeed 0.3-0.8's CPU Adam under fp16: "
				"--precision fp16-mixed (got %s)",
				mdl_precision_name(w->job.precision)),
		       EXIT_INVALID;
	if (sim_dispatcher_parse(o->moe_dispatcher, c))
		return snprintf(err, errlen,
				"--moe-dispatcher: '%s' (allowed: alltoall, deepep, hybridep)",
				o->moe_dispatcher),
		       EXIT_INVALID;
	c->dispatcher_sms = (uint32_t)o->moe_dispatcher_sms;
	if (c->dispatcher == SIM_DISPATCH_ALLTOALL && tp_opts_given(o, "moe-dispatcher-sms"))
		return snprintf(err, errlen,
				"--moe-dispatcher-sms %llu sets the SMs of a flex dispatcher's "
				"kernels: give --moe-dispatcher deepep or hybridep with it (NCCL's "
				"alltoall picks its own)",
				(unsigned long long)o->moe_dispatcher_sms),
		       EXIT_INVALID;
	if (sim_swap_pipeline_parse(o->swap_pipeline, c))
		return snprintf(err, errlen, "--swap-pipeline: '%s' (allowed: none, read, write, both)",
				o->swap_pipeline),
		       EXIT_INVALID;
	/* 0: DeepSpeed's default, so a report can tell a size the user chose */
	c->reduce_bucket = tp_opts_given(o, "reduce-bucket") ? (double)o->reduce_bucket : 0;
	c->deepspeed = o->deepspeed != NULL;
	c->sub_group = o->ds.sub_group_size;
	c->param_buffers = (uint32_t)o->ds.param_buffers;
	c->param_buffer_size = (double)o->ds.param_buffer_size;
	c->max_in_cpu = (double)o->max_in_cpu;
	if (o->ds.reduce_bucket_auto && !tp_opts_given(o, "reduce-bucket"))
		/* transformers' integrations/deepspeed.py fills "auto" with hidden_size^2 */
		c->reduce_bucket = (double)(w->arch.hidden * w->arch.hidden);
	return 0;
}

int tp_sim_config(const struct tp_opts *o, struct sim_workload *w, struct sim_config *c,
		  char *err, size_t errlen)
{
	uint64_t tpp = o->tp * o->pp * o->cp, dp = o->dp;

	*c = (struct sim_config){{(uint32_t)o->tp, (uint32_t)o->pp, 1, (uint32_t)o->zero, o->tp > 1,
				  (uint32_t)o->interleave},
				 1,
				 sim_policy_find(o->policy),
				 0,
				 0,
				 o->recompute >= 0,
				 o->loss >= 0};
	int rc = tp_framework_config(o, w, c, err, errlen);
	if (rc)
		return rc;
	if (!c->policy)
		return snprintf(err, errlen, "--policy: unknown policy '%s' (allowed: %s)", o->policy,
				sim_policy_names()),
		       EXIT_INVALID;
	if (tp_opts_given(o, "max-in-cpu") && strcmp(c->policy->name, "zero-infinity") != 0)
		return snprintf(err, errlen,
				"--max-in-cpu keeps part of ZeRO-Infinity's parameters in DRAM: "
				"policy zero-infinity (got %s)",
				c->policy->name),
		       EXIT_INVALID;
	/* a host-tier policy shards as its framework does: another stage is a contradiction,
	 * and the layout echoes the stage it runs */
	int stage = c->policy->zero;
	if (stage >= 0 && tp_opts_given(o, "zero") && o->zero != (uint64_t)stage)
		return snprintf(err, errlen, "--zero %llu: policy %s runs ZeRO-%d (give %d or leave "
					     "--zero out)%s",
				(unsigned long long)o->zero, c->policy->name, stage, stage,
				o->zero == 3 ? "; ZeRO-3 with the optimizer on the CPU is --policy "
					       "zero3-offload"
					     : ""),
		       EXIT_INVALID;
	if (stage >= 0)
		c->layout.zero = (uint32_t)stage;
	if (dp == 0) {
		if (o->gpus % tpp)
			return snprintf(err, errlen,
					"--gpus %llu is not a multiple of --tp x --pp x --cp = %llu",
					(unsigned long long)o->gpus, (unsigned long long)tpp),
			       EXIT_INVALID;
		dp = o->gpus / tpp;
	} else if (tp_opts_given(o, "gpus") && dp * tpp != o->gpus) {
		return snprintf(err, errlen, "--gpus %llu differs from --tp x --pp x --cp x --dp = %llu",
				(unsigned long long)o->gpus, (unsigned long long)(dp * tpp)),
		       EXIT_INVALID;
	}
	c->layout.dp = (uint32_t)dp;
	c->layout.ep = (uint32_t)o->ep;
	if (o->expert_tp && (o->expert_tp > o->tp || o->tp % o->expert_tp))
		return snprintf(err, errlen, "--expert-tp %llu must divide --tp %llu (0: --tp)",
				(unsigned long long)o->expert_tp, (unsigned long long)o->tp),
		       EXIT_INVALID;
	c->layout.etp = (uint32_t)o->expert_tp;
	if ((o->first_stage_layers || o->last_stage_layers) && o->pp < 2)
		return snprintf(err, errlen,
				"--%s-stage-layers %llu sets a pipeline stage's layers: --pp 2 or "
				"more",
				o->first_stage_layers ? "first" : "last",
				(unsigned long long)(o->first_stage_layers ? o->first_stage_layers
									   : o->last_stage_layers)),
		       EXIT_INVALID;
	c->layout.first = (uint32_t)o->first_stage_layers;
	c->layout.last = (uint32_t)o->last_stage_layers;
	c->layout.cp = (uint32_t)o->cp;
	c->layout.shard = (uint32_t)o->dp_shard;
	/* the host tiers' optimizers (DeepSpeed's CPU Adam, aiDAPTIV's) step a whole fp32 master */
	if (w->job.master == MDL_MASTER_REMAINDER && strcmp(c->policy->name, "gpu") != 0)
		return snprintf(err, errlen,
				"--master-weights remainder is an optimizer on the GPUs: "
				"policy gpu, not %s",
				c->policy->name),
		       EXIT_INVALID;
	if (w->job.master == MDL_MASTER_REMAINDER && o->deepspeed)
		return snprintf(err, errlen, "--master-weights remainder: DeepSpeed's optimizers "
					     "keep whole fp32 partitions (--deepspeed %s)",
				o->deepspeed),
		       EXIT_INVALID;
	if (c->bwd_prefetch_post && strcmp(c->policy->name, "gpu") != 0)
		return snprintf(err, errlen,
				"--backward-prefetch post is FSDP's (policy gpu); %s prefetches as "
				"DeepSpeed's ZeRO-3 does, by its trace",
				c->policy->name),
		       EXIT_INVALID;
	bool fsdp_pol = !strcmp(c->policy->name, "gpu") || !strcmp(c->policy->name, "zero3-offload");
	if (c->ckpt_outside && (!fsdp_pol || c->layout.zero != 3 || o->deepspeed))
		return snprintf(err, errlen,
				"--checkpoint-wrap outside is where transformers' checkpoint wraps "
				"FSDP's units: policy gpu with --zero 3, or zero3-offload for "
				"FSDP's CPU offload, and no --deepspeed (got policy %s, --zero "
				"%u%s)",
				c->policy->name, c->layout.zero,
				o->deepspeed ? ", --deepspeed" : ""),
		       EXIT_INVALID;
	/* FSDP's no_sync: on the GPUs across one pipeline stage (below ZeRO-2 the gradients are
	 * reduced once a step either way, DDP's no_sync: nothing changes), or with FSDP's CPU
	 * offload (zero3-offload); the other host tiers are DeepSpeed's or aiDAPTIV's */
	bool fsdp_offload = !strcmp(c->policy->name, "zero3-offload");
	if (c->grad_sync_last && ((strcmp(c->policy->name, "gpu") && !fsdp_offload) ||
				  (c->layout.zero >= 2 && c->layout.pp > 1)))
		return snprintf(err, errlen,
				"--grad-sync last is FSDP's no_sync: policy gpu with one pipeline "
				"stage, or zero3-offload for FSDP's CPU offload (got policy %s, "
				"--pp %u)",
				c->policy->name, c->layout.pp),
		       EXIT_INVALID;
	/* below ZeRO-3 the weights stay whole on each GPU: backward gathers nothing to prefetch */
	if (c->bwd_prefetch_post && c->layout.zero != 3)
		return snprintf(err, errlen,
				"--backward-prefetch post is when FSDP's FULL_SHARD (--zero 3) "
				"gathers the next block's weights in backward; --zero %u keeps them "
				"whole",
				c->layout.zero),
		       EXIT_INVALID;
	/* hybrid sharding: the GPUs' own ZeRO partitions (the host tiers shard over every rank) */
	if (o->dp_shard && o->dp_shard != dp) {
		if (strcmp(c->policy->name, "gpu") != 0)
			return snprintf(err, errlen,
					"--dp-shard %llu: hybrid sharding is modelled for policy "
					"gpu only, not %s",
					(unsigned long long)o->dp_shard, c->policy->name),
			       EXIT_INVALID;
		if (o->dp_shard < 2 || dp % o->dp_shard)
			return snprintf(err, errlen,
					"--dp-shard %llu must divide the %llu data-parallel ranks "
					"and be at least 2 (0: every rank)",
					(unsigned long long)o->dp_shard, (unsigned long long)dp),
			       EXIT_INVALID;
		if (o->zero == 0 || o->ep > 1)
			return snprintf(err, errlen,
					"--dp-shard %llu splits ZeRO's partition: --zero 1-3%s",
					(unsigned long long)o->dp_shard,
					o->ep > 1 ? ", without expert parallelism (--ep)" : ""),
			       EXIT_INVALID;
	}
	/* context and expert parallelism are Megatron-Core's: modelled for the gpu policy */
	if ((o->cp > 1 || o->ep > 1) && strcmp(c->policy->name, "gpu") != 0)
		return snprintf(err, errlen, "--%s %llu: %s parallelism is modelled for policy gpu only",
				o->cp > 1 ? "cp" : "ep",
				(unsigned long long)(o->cp > 1 ? o->cp : o->ep),
				o->cp > 1 ? "context" : "expert"),
		       EXIT_INVALID;
	if (mdl_job_gptq(&w->job) && (o->tp > 1 || o->pp > 1 || o->cp > 1))
		return snprintf(err, errlen,
				"--%s %llu: GPTQ base weights (--quant gptq) train under PEFT and "
				"auto-gptq, data parallel only (--tp, --pp and --cp 1)",
				o->tp > 1 ? "tp" : o->pp > 1 ? "pp" : "cp",
				(unsigned long long)(o->tp > 1 ? o->tp : o->pp > 1 ? o->pp : o->cp)),
		       EXIT_INVALID;
	if (o->cp > 1 && o->zero >= 2)
		return snprintf(err, errlen, "--cp %llu runs with Megatron's distributed optimizer: "
					     "--zero 0 or 1",
				(unsigned long long)o->cp),
		       EXIT_INVALID;
	/* Megatron-Core splits each sequence into 2 x cp chunks for causal load balance */
	if (o->cp > 1 && o->seq % (2 * o->cp))
		return snprintf(err, errlen, "--cp %llu needs --seq a multiple of 2 x cp = %llu",
				(unsigned long long)o->cp, (unsigned long long)(2 * o->cp)),
		       EXIT_INVALID;
	if (!strcmp(o->sequence_parallel, "yes") || !strcmp(o->sequence_parallel, "no"))
		c->layout.sp = o->sequence_parallel[0] == 'y' && o->tp > 1; /* no effect at tp 1 */
	else if (strcmp(o->sequence_parallel, "auto"))
		return snprintf(err, errlen, "--sequence-parallel: '%s' (allowed: yes, no, auto)",
				o->sequence_parallel),
		       EXIT_INVALID;
	bool offload_param;
	if (tp_yes_no("--offload-param", o->offload_param, &offload_param, err, errlen))
		return EXIT_INVALID;
	c->params_on_gpu = !offload_param;
	/* FSDP's CPU offload takes the parameters and the gradients to the host together */
	if (c->grad_sync_last && c->params_on_gpu && fsdp_offload)
		return snprintf(err, errlen,
				"--grad-sync last with zero3-offload is FSDP's CPU offload, which "
				"offloads the parameters too: --offload-param yes (--offload-param "
				"no is DeepSpeed's offload_optimizer alone)"),
		       EXIT_INVALID;
	/* Megatron-Core asserts sequence parallelism for --tp-comm-overlap (arguments.py) */
	if (c->tp_comm_overlap && !c->layout.sp)
		return snprintf(err, errlen, "--tp-comm-overlap yes needs --tp > 1 with sequence "
					     "parallelism (--sequence-parallel yes)"),
		       EXIT_INVALID;
	/* a DeepSpeed config's micro-batch or accumulation from its train_batch_size, floored as
	 * DeepSpeed divides (dsconfig.h), unless the command line gave it; the accumulation 1
	 * where neither gave one */
	uint64_t tbs = o->ds.train_batch_size;
	if (o->ds.derive == TP_DS_DERIVE_MICRO && !tp_opts_given(o, "batch")) {
		w->grad_accum = w->grad_accum ? w->grad_accum : 1;
		w->job.micro_batch = tbs / dp / w->grad_accum;
	} else if (o->ds.derive == TP_DS_DERIVE_ACCUM && !tp_opts_given(o, "grad-accum"))
		w->grad_accum = tbs / w->job.micro_batch / dp;
	if (o->ds.derive && (!w->job.micro_batch || !w->grad_accum))
		return snprintf(err, errlen,
				"%s: train_batch_size %llu is less than one sequence per "
				"data-parallel rank (%llu ranks)",
				o->deepspeed, (unsigned long long)tbs, (unsigned long long)dp),
		       EXIT_INVALID;
	c->grad_accum = sim_plan_micro_batches(w, c->layout.dp);
	/* DeepSpeed asserts train_batch_size = micro-batch x accumulation x data-parallel ranks */
	uint64_t got = w->job.micro_batch * c->grad_accum * dp;
	if (tbs && tbs != got)
		return snprintf(err, errlen,
				"%s: train_batch_size %llu is not micro-batch %llu x accumulation "
				"%llu x %llu data-parallel ranks = %llu",
				o->deepspeed, (unsigned long long)tbs,
				(unsigned long long)w->job.micro_batch,
				(unsigned long long)c->grad_accum, (unsigned long long)dp,
				(unsigned long long)got),
		       EXIT_INVALID;
	return 0;
}

/* The part of option `name`'s value that names a file or catalog entry, into head (n bytes):
 * --flash NAME:COUNT's NAME (parse_flash), else the value itself. */
static const char *name_part(const char *name, const char *value, char *head, size_t n)
{
	char e[8];
	uint32_t count;
	return !strcmp(name, "flash") && parse_flash(value, head, n, &count, e, sizeof e) == 0
		       ? head
		       : value;
}

bool tp_opts_input_file(const char *name, const char *value)
{
	static const char *const files[] = {"profile", "prices", "deepspeed"};
	static const char *const named[] = {"model", "gpu", "host", "flash"};
	for (size_t i = 0; i < sizeof files / sizeof *files; i++)
		if (!strcmp(name, files[i]))
			return true;
	for (size_t i = 0; i < sizeof named / sizeof *named; i++)
		if (!strcmp(name, named[i])) {
			char head[4096];
			return cfg_is_path(name_part(name, value, head, sizeof head));
		}
	return false;
}

int tp_input_file_abs(const char *name, const char *value, char *out, size_t len)
{
	if (!tp_opts_input_file(name, value))
		return -1;
	/* the file resolved; what follows its name (--flash's :COUNT) kept after it */
	char head[4096], abs[PATH_MAX];
	const char *file = name_part(name, value, head, sizeof head);
	if (!realpath(file, abs))
		return -1;
	int n = snprintf(out, len, "%s%s", abs, value + strlen(file));
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int tp_input_value(const char *name, const char *value, char *err, size_t errlen)
{
	int rc = tp_opts_value(CMD_SIMULATE, name, value, err, errlen);
	if (rc)
		return rc == -2 ? EXIT_USAGE : EXIT_INVALID;
	char path[4096], model[256], flash[256];
	uint32_t count;
	struct mdl_arch a;
	struct mdl_hw hw;
	bool ok = true;
	if (!strcmp(name, "model"))
		ok = cfg_model_resolve(value, path, sizeof path, model, sizeof model, NULL, err,
				       errlen) >= 0 &&
		     mdl_arch_load(path, &a, err, errlen) >= 0;
	else if (!strcmp(name, "gpu"))
		ok = cfg_gpu_get(value, &hw.gpu, err, errlen) >= 0;
	else if (!strcmp(name, "host") && strcmp(value, "auto"))
		ok = cfg_host_get(value, &hw.host, err, errlen) >= 0;
	else if (!strcmp(name, "flash") && strcmp(value, "none"))
		ok = parse_flash(value, flash, sizeof flash, &count, err, errlen) >= 0 &&
		     cfg_flash_get(flash, &hw.flash, err, errlen) >= 0;
	else if (!strcmp(name, "profile") || !strcmp(name, "prices")) {
		char *text = cfg_read_file(value, name, 1 << 22, err, errlen);
		ok = text != NULL;
		free(text);
	} else if (!strcmp(name, "policy") && !sim_policy_find(value)) {
		snprintf(err, errlen, "--policy: unknown policy '%s' (allowed: %s)", value,
			 sim_policy_names());
		ok = false;
	}
	return ok ? 0 : EXIT_INVALID;
}

void tp_flags_beside(cJSON *flags, const char *file)
{
	cJSON *v;
	cJSON_ArrayForEach(v, flags)
	{
		char p[4400];
		if (cJSON_IsString(v) && tp_opts_input_file(v->string, v->valuestring) &&
		    cfg_path_beside(file, v->valuestring, p, sizeof p) == 0)
			cJSON_SetValuestring(v, p);
	}
}

void tp_warn_inputs(const char *cmd, const struct tp_opts *o, const struct sim_workload *w,
		    const struct mdl_hw *hw)
{
	if (hw->prof.warning[0])
		fprintf(stderr, "tierplan %s: warning: %s\n", cmd, hw->prof.warning);
	if (w->arch.warning[0])
		fprintf(stderr, "tierplan %s: warning: %s\n", cmd, w->arch.warning);
	/* what a DeepSpeed config became, key by key */
	for (const char *p = o->deepspeed ? o->ds.notes : ""; *p;) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p) : (int)strlen(p);
		fprintf(stderr, "tierplan %s: %s: %.*s\n", cmd, o->deepspeed, len, p);
		p += len + (nl != NULL);
	}
	/* the Trainer's adamw_torch steps by the multi-tensor path, which is not the default */
	if (o->optimizer_foreach && !tp_opts_given(o, "foreach-optimizer"))
		fprintf(stderr,
			"tierplan %s: note: --optimizer adamw_torch is torch.optim.AdamW, which "
			"steps by its multi-tensor path on the GPU: add --foreach-optimizer yes to "
			"plan that (the default is one fused kernel)\n",
			cmd);
	if (alibi_eager(o, w))
		fprintf(stderr,
			"tierplan %s: note: attention eager, as transformers runs ALiBi models "
			"(--attention flash where the framework passes ALiBi slopes to "
			"FlashAttention-2, triton for llm-foundry's MPT)\n",
			cmd);
	/* where the checkpoint's quantisation comes from: its config, or its name */
	const char *says = w->arch.quant_named ? "the checkpoint's name" : "the config's "
									    "quantization_config";
	if (gptq_config(o, w))
		fprintf(stderr,
			"tierplan %s: note: --quant gptq, as %s says (group size %u%s%s)\n", cmd,
			says, w->job.quant_group, w->job.quant_desc_act ? ", act order" : "",
			w->arch.quant_named ? ", GPTQConfig's default" : "");
	else if (w->arch.quant_method[0] && w->job.method != MDL_QLORA)
		fprintf(stderr,
			"tierplan %s: note: the quantisation %s states (%s) is not used by "
			"--method %s: its weights are planned in %s%s\n",
			cmd, says, w->arch.quant_method, mdl_method_name(w->job.method),
			mdl_precision_name(w->job.precision),
			w->arch.quant_named ? " (--method qlora trains over them)" : "");
	else if (w->arch.quant_method[0] && strcmp(w->arch.quant_method, "gptq") &&
		 strcmp(w->arch.quant_method, "bitsandbytes"))
		fprintf(stderr,
			"tierplan %s: note: the quantisation %s states (%s) is not modelled: the "
			"base weights are planned as --quant %s\n",
			cmd, says, w->arch.quant_method, mdl_quant_name(w->job.quant));
	if (o->seq > w->arch.positions)
		fprintf(stderr, "tierplan %s: warning: --seq %llu exceeds the model's %llu positions\n",
			cmd, (unsigned long long)o->seq, (unsigned long long)w->arch.positions);
	if (hw->dram_set && hw->dram <= mdl_dram_reserve(&hw->host)) {
		char d[32], r[32];
		fprintf(stderr,
			"tierplan %s: warning: --dram %s is no more than the %s per node the host "
			"keeps for the OS and data loader: no host tier has room in it\n",
			cmd, cfg_fmt_bytes(hw->dram, d, sizeof d),
			cfg_fmt_bytes(mdl_dram_reserve(&hw->host), r, sizeof r));
	}
}

int tp_resolve_argv(int argc, char **argv, struct sim_workload *w, struct mdl_hw *hw,
		    struct sim_econ *ec, struct sim_config *c, char *err, size_t errlen)
{
	struct tp_opts op;
	char name[96], path[4096];

	/* zeroed whole, padding too, so equal inputs are equal bytes (sweep's memo) */
	memset(w, 0, sizeof *w);
	memset(hw, 0, sizeof *hw);
	memset(ec, 0, sizeof *ec);
	memset(c, 0, sizeof *c);
	int rc = tp_opts_parse(CMD_SIMULATE, argc, argv, 2, &op, err, errlen);
	if (rc < 0)
		return rc == -2 ? EXIT_USAGE : EXIT_INVALID;
	if ((rc = tp_inputs(&op, w, hw, ec, name, sizeof name, path, sizeof path, err, errlen)))
		return rc;
	return tp_sim_config(&op, w, c, err, errlen);
}

int tp_simulate_argv(int argc, char **argv, struct eng *e, bool stop_unfit, struct sim_option *o,
		     struct sim_workload *wout, struct mdl_hw *hwout, char *err, size_t errlen)
{
	struct sim_workload *w = malloc(sizeof *w);
	struct mdl_hw hw;
	struct sim_econ ec;
	struct sim_config c;
	int rc;

	memset(o, 0, sizeof *o);
	if (!w)
		return snprintf(err, errlen, "out of memory"), EXIT_SYSTEM;
	rc = tp_resolve_argv(argc, argv, w, &hw, &ec, &c, err, errlen);
	if (!rc)
		c.stop_unfit = stop_unfit;
	if (!rc && sim_run(e, w, &hw, &ec, &c, o, err, errlen))
		rc = EXIT_INVALID;
	if (!rc && wout)
		*wout = *w;
	if (!rc && hwout)
		*hwout = hw;
	free(w);
	return rc;
}

int tp_simulate_json(const cJSON *flags, struct eng *e, struct sim_option *o,
		     struct sim_workload *w, struct mdl_hw *hw, char *err, size_t errlen)
{
	char *argv[2 * TP_JSON_FLAGS + 3], vals[TP_JSON_FLAGS][256], keys[TP_JSON_FLAGS][48];
	int argc = 2, n = 0;
	const cJSON *it;

	argv[0] = "tierplan";
	argv[1] = "simulate";
	cJSON_ArrayForEach(it, flags)
	{
		if (n == TP_JSON_FLAGS)
			return snprintf(err, errlen, "more than %d flags", TP_JSON_FLAGS), EXIT_INVALID;
		snprintf(keys[n], sizeof keys[n], "--%s", it->string);
		if (cJSON_IsString(it))
			snprintf(vals[n], sizeof vals[n], "%s", it->valuestring);
		else if (cJSON_IsNumber(it))
			snprintf(vals[n], sizeof vals[n], "%.17g", it->valuedouble);
		else
			return snprintf(err, errlen, "flag '%s' must be a string or number",
					it->string),
			       EXIT_INVALID;
		argv[argc++] = keys[n];
		argv[argc++] = vals[n++];
	}
	argv[argc] = NULL;
	return tp_simulate_argv(argc, argv, e, false, o, w, hw, err, errlen);
}
