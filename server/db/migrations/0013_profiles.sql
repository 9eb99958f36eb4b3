CREATE SEQUENCE "public"."profile_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "profile_builds" (
	"id" text PRIMARY KEY DEFAULT 'bld_' || nextval('agent_build_seq') NOT NULL,
	"profile_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"account_id" text NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"steps" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"build_number" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "profile_prompt_versions" (
	"id" text PRIMARY KEY DEFAULT 'pv_' || nextval('prompt_version_seq') NOT NULL,
	"profile_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"account_id" text NOT NULL,
	"type" text DEFAULT 'outbound' NOT NULL,
	"body" text NOT NULL,
	"label" text NOT NULL,
	"build_id" text,
	"deployed_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "profiles" (
	"id" text PRIMARY KEY DEFAULT 'prf_' || nextval('profile_seq') NOT NULL,
	"account_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"name" text NOT NULL,
	"role" text NOT NULL,
	"goal" text,
	"greeting" text,
	"variables" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"capabilities" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"voicemail_message" text,
	"max_call_duration_s" integer DEFAULT 600 NOT NULL,
	"status" text DEFAULT 'draft' NOT NULL,
	"prompt_version" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "profile_builds" ADD CONSTRAINT "profile_builds_profile_id_profiles_id_fk" FOREIGN KEY ("profile_id") REFERENCES "public"."profiles"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "profile_builds" ADD CONSTRAINT "profile_builds_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "profile_builds" ADD CONSTRAINT "profile_builds_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "profile_prompt_versions" ADD CONSTRAINT "profile_prompt_versions_profile_id_profiles_id_fk" FOREIGN KEY ("profile_id") REFERENCES "public"."profiles"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "profile_prompt_versions" ADD CONSTRAINT "profile_prompt_versions_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "profile_prompt_versions" ADD CONSTRAINT "profile_prompt_versions_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "profiles" ADD CONSTRAINT "profiles_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "profiles" ADD CONSTRAINT "profiles_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "profile_builds_profile_idx" ON "profile_builds" USING btree ("profile_id","build_number");--> statement-breakpoint
CREATE UNIQUE INDEX "profile_prompt_versions_label_uq" ON "profile_prompt_versions" USING btree ("profile_id","label");--> statement-breakpoint
CREATE INDEX "profiles_agent_idx" ON "profiles" USING btree ("agent_id","created_at","id");--> statement-breakpoint
CREATE INDEX "profiles_account_idx" ON "profiles" USING btree ("account_id");