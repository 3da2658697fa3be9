CREATE TABLE "analysis_runs" (
	"rollout_id" uuid NOT NULL,
	"cluster_name" text NOT NULL,
	"attempt" integer NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"measurements" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"verdict" text NOT NULL,
	"message" text DEFAULT '' NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "analysis_runs_rollout_id_cluster_name_attempt_pk" PRIMARY KEY("rollout_id","cluster_name","attempt")
);
--> statement-breakpoint
ALTER TABLE "clusters" ADD COLUMN "prometheus_url" text;--> statement-breakpoint
ALTER TABLE "analysis_runs" ADD CONSTRAINT "analysis_runs_rollout_id_rollouts_id_fk" FOREIGN KEY ("rollout_id") REFERENCES "public"."rollouts"("id") ON DELETE cascade ON UPDATE no action;