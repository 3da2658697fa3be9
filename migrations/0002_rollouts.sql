CREATE TABLE "rollout_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"rollout_id" uuid NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"level" text NOT NULL,
	"message" text NOT NULL,
	"wave" text,
	"cluster" text,
	"phase" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rollout_pins" (
	"workload_id" uuid NOT NULL,
	"cluster_name" text NOT NULL,
	"revision" integer NOT NULL,
	"partition" jsonb,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "rollout_pins_workload_id_cluster_name_pk" PRIMARY KEY("workload_id","cluster_name")
);
--> statement-breakpoint
CREATE TABLE "rollouts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"workload_id" uuid NOT NULL,
	"target_revision" integer NOT NULL,
	"previous_revision" integer NOT NULL,
	"strategy" jsonb NOT NULL,
	"plan" jsonb NOT NULL,
	"state" jsonb NOT NULL,
	"phase" text NOT NULL,
	"rollback_of" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "workloads" ADD COLUMN "update_policy" text DEFAULT 'Immediate' NOT NULL;--> statement-breakpoint
ALTER TABLE "workloads" ADD COLUMN "stable_revision" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "rollout_events" ADD CONSTRAINT "rollout_events_rollout_id_rollouts_id_fk" FOREIGN KEY ("rollout_id") REFERENCES "public"."rollouts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rollout_pins" ADD CONSTRAINT "rollout_pins_workload_id_workloads_id_fk" FOREIGN KEY ("workload_id") REFERENCES "public"."workloads"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rollouts" ADD CONSTRAINT "rollouts_workload_id_workloads_id_fk" FOREIGN KEY ("workload_id") REFERENCES "public"."workloads"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "rollout_events_rollout_idx" ON "rollout_events" USING btree ("rollout_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "rollouts_one_active_idx" ON "rollouts" USING btree ("workload_id") WHERE "rollouts"."phase" in ('Progressing', 'WaitingApproval', 'Paused');--> statement-breakpoint
CREATE INDEX "rollouts_phase_idx" ON "rollouts" USING btree ("phase");--> statement-breakpoint
CREATE INDEX "rollouts_workload_idx" ON "rollouts" USING btree ("workload_id","created_at");