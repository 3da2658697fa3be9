ALTER TABLE "clusters" ADD COLUMN "prometheus_username_ref" text;--> statement-breakpoint
ALTER TABLE "clusters" ADD COLUMN "prometheus_password_ref" text;--> statement-breakpoint
ALTER TABLE "clusters" ADD COLUMN "prometheus_ca_ref" text;