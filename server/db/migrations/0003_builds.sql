CREATE TABLE "kb_summaries" (
	"agent_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"text" text DEFAULT '' NOT NULL,
	"version" integer DEFAULT 0 NOT NULL,
	"source" text DEFAULT 'build' NOT NULL,
	"stale" boolean DEFAULT false NOT NULL,
	"last_job" jsonb,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "agent_builds" ADD COLUMN "build_number" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "agent_builds" ADD COLUMN "outputs" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "kb_summaries" ADD CONSTRAINT "kb_summaries_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kb_summaries" ADD CONSTRAINT "kb_summaries_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;