CREATE SEQUENCE "public"."agent_build_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE SEQUENCE "public"."agent_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE SEQUENCE "public"."kb_document_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE SEQUENCE "public"."prompt_version_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "agent_builds" (
	"id" text PRIMARY KEY DEFAULT 'bld_' || nextval('agent_build_seq') NOT NULL,
	"agent_id" text NOT NULL,
	"account_id" text NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"steps" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"from_step" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp (3) with time zone,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "agent_versions" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "agent_versions_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"agent_id" text NOT NULL,
	"account_id" text NOT NULL,
	"agent_version" text NOT NULL,
	"prompt_version" text,
	"reason" text NOT NULL,
	"changed" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"deployed_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agents" (
	"id" text PRIMARY KEY DEFAULT 'agt_' || nextval('agent_seq') NOT NULL,
	"account_id" text NOT NULL,
	"name" text NOT NULL,
	"agent_type" text DEFAULT 'chat' NOT NULL,
	"version_n" integer DEFAULT 0 NOT NULL,
	"prompt_version" text,
	"website_url" text,
	"instructions" text,
	"chat_instructions" text,
	"voice_chat_instructions" text,
	"role" text,
	"greeting_initial" text,
	"business_name" text,
	"business_profile" text,
	"conversation_style" text,
	"refinement_rules" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"ai_provider" text DEFAULT 'openai' NOT NULL,
	"use_large_model" boolean DEFAULT false NOT NULL,
	"temperature" double precision DEFAULT 0.7 NOT NULL,
	"max_response_tokens" integer,
	"capabilities" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"capability_settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"voice_id" text,
	"voice_locale" text,
	"speaking_rate" double precision DEFAULT 1 NOT NULL,
	"barge_in" boolean DEFAULT true NOT NULL,
	"settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"public_token" text,
	"allowed_domains" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"appearance" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "kb_documents" (
	"id" text PRIMARY KEY NOT NULL,
	"agent_id" text NOT NULL,
	"account_id" text NOT NULL,
	"kind" text NOT NULL,
	"title" text,
	"url" text,
	"status" text DEFAULT 'processing' NOT NULL,
	"error" text,
	"text" text,
	"language" text,
	"keep_verbatim" boolean DEFAULT false NOT NULL,
	"verbatim_in_calls" boolean DEFAULT false NOT NULL,
	"chars" integer DEFAULT 0 NOT NULL,
	"crawl_id" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "prompt_versions" (
	"id" text PRIMARY KEY DEFAULT 'pv_' || nextval('prompt_version_seq') NOT NULL,
	"agent_id" text NOT NULL,
	"account_id" text NOT NULL,
	"type" text NOT NULL,
	"body" text,
	"label" text NOT NULL,
	"notes" text,
	"restored_from" text,
	"agent_version" text NOT NULL,
	"deployed_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"active" boolean DEFAULT true NOT NULL
);
--> statement-breakpoint
ALTER TABLE "agent_builds" ADD CONSTRAINT "agent_builds_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_builds" ADD CONSTRAINT "agent_builds_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_versions" ADD CONSTRAINT "agent_versions_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_versions" ADD CONSTRAINT "agent_versions_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agents" ADD CONSTRAINT "agents_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kb_documents" ADD CONSTRAINT "kb_documents_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "kb_documents" ADD CONSTRAINT "kb_documents_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "prompt_versions" ADD CONSTRAINT "prompt_versions_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "prompt_versions" ADD CONSTRAINT "prompt_versions_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "agent_builds_agent_idx" ON "agent_builds" USING btree ("agent_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "agent_versions_version_uq" ON "agent_versions" USING btree ("agent_id","agent_version");--> statement-breakpoint
CREATE INDEX "agent_versions_account_idx" ON "agent_versions" USING btree ("account_id","deployed_at","id");--> statement-breakpoint
CREATE INDEX "agents_account_created_idx" ON "agents" USING btree ("account_id","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "agents_public_token_uq" ON "agents" USING btree ("public_token");--> statement-breakpoint
CREATE INDEX "kb_documents_agent_idx" ON "kb_documents" USING btree ("agent_id","created_at","kind","id");--> statement-breakpoint
CREATE UNIQUE INDEX "prompt_versions_label_uq" ON "prompt_versions" USING btree ("agent_id","label");--> statement-breakpoint
CREATE UNIQUE INDEX "prompt_versions_active_uq" ON "prompt_versions" USING btree ("agent_id","type") WHERE "prompt_versions"."active";--> statement-breakpoint
CREATE INDEX "prompt_versions_agent_idx" ON "prompt_versions" USING btree ("agent_id","deployed_at","id");