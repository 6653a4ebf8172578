/*
 * dsconfig — a DeepSpeed ds_config.json read as the simulate flags it means.
 *
 * `--deepspeed FILE` lets a user size the job they already configured: the ZeRO stage and its
 * offload targets choose the policy (gpu with --zero N, zero-offload, zero3-offload,
 * zero-infinity), the batch keys the micro-batch and gradient accumulation, the fp16/bf16
 * sections the precision, the optimizer section the optimizer. Every key is accounted for:
 * used (with the flag it became), ignored (with why: tierplan does not model it, or takes it
 * from elsewhere), or refused. "auto" (Hugging Face's integration fills it from
 * TrainingArguments) leaves the flag to the command line or its default.
 *
 * Mapping from the DeepSpeed configuration reference (deepspeed.ai/docs/config-json): stage 0-3;
 * offload_optimizer.device cpu with stage 1-2 is ZeRO-Offload, with stage 3 ZeRO-3 CPU offload;
 * offload_param.device nvme (stage 3) is ZeRO-Infinity; nvme offload and offload_param need
 * stage 3; fp16 and bf16 are exclusive, neither is fp32.
 *
 * Failure: -1 with one line naming the file and the key (unreadable, not JSON, a wrong type, a
 * value DeepSpeed refuses, or a combination tierplan cannot simulate).
 */
#ifndef TIERPLAN_DSCONFIG_H
#define TIERPLAN_DSCONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* the flags a config can set: 13 distinct (the set() calls of dsconfig.c), each once */
#define TP_DS_MAX_FLAGS 16

struct tp_ds {
	struct {
		const char *flag; /* the simulate option, without "--" */
		char value[40];	  /* as it would be typed */
		char key[80];	  /* the ds_config key it came from */
	} set[TP_DS_MAX_FLAGS];
	int n;
	uint64_t train_batch_size; /* 0 = not set; checked against micro x accumulation x dp */
	enum {
		TP_DS_DERIVE_NONE,  /* train_batch_size, if set, is checked */
		TP_DS_DERIVE_MICRO, /* micro-batch = train_batch_size / (accumulation x dp) */
		TP_DS_DERIVE_ACCUM  /* accumulation = train_batch_size / (micro-batch x dp) */
	} derive;
	bool reduce_bucket_auto;   /* reduce_bucket_size "auto": hidden^2, as transformers fills it */
	double sub_group_size;     /* zero_optimization.sub_group_size; 0 = DeepSpeed's 1e9 */
	/* offload_param's buffer_count and buffer_size (elements) under nvme; 0 = not given */
	uint64_t param_buffers, param_buffer_size;
	char notes[3072];	   /* "used ...", "ignored ... (why)" lines, '\n' separated */
};

/* Reads path into *ds. 0 ok; -1 with err. */
int tp_ds_read(const char *path, struct tp_ds *ds, char *err, size_t errlen);

/* The same for a config already in memory; origin names it in messages (tests, fuzzing). */
int tp_ds_parse(const char *json, const char *origin, struct tp_ds *ds, char *err,
		size_t errlen);

#endif
