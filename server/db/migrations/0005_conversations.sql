CREATE SEQUENCE "public"."conversation_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "conversations" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"agent_id" text,
	"agent_type" text NOT NULL,
	"channel" text NOT NULL,
	"status" text DEFAULT 'in_progress' NOT NULL,
	"session_id" text NOT NULL,
	"external_session_id" text,
	"agent_version" text,
	"prompt_version" text,
	"model" text,
	"started_at" timestamp (3) with time zone NOT NULL,
	"ended_at" timestamp (3) with time zone,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"identity" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"has_identity" boolean DEFAULT false NOT NULL,
	"custom" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"metrics" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"summary" jsonb,
	"summary_status" text DEFAULT 'pending' NOT NULL,
	"outcome" text,
	"escalated" boolean DEFAULT false NOT NULL,
	"language" text,
	"has_recording" boolean DEFAULT false NOT NULL,
	"recording" jsonb,
	"records" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"turn_count" integer DEFAULT 0 NOT NULL,
	"turn_locked_until" timestamp (3) with time zone,
	"country" text,
	"deleted_at" timestamp (3) with time zone,
	"delete_reason" text
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"type" text NOT NULL,
	"payload" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"dispatched_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "mail_outbox" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text,
	"provider" text NOT NULL,
	"to" jsonb NOT NULL,
	"subject" text NOT NULL,
	"text" text NOT NULL,
	"tags" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"status" text DEFAULT 'sent' NOT NULL,
	"error" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "message_keys" (
	"conversation_id" text NOT NULL,
	"key" text NOT NULL,
	"text_hash" text NOT NULL,
	"response" jsonb,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "message_keys_conversation_id_key_pk" PRIMARY KEY("conversation_id","key")
);
--> statement-breakpoint
CREATE TABLE "turns" (
	"conversation_id" text NOT NULL,
	"turn_index" integer NOT NULL,
	"speaker" text NOT NULL,
	"text" text NOT NULL,
	"timestamp" timestamp (3) with time zone NOT NULL,
	"latency_ms" integer,
	"turn_type" text NOT NULL,
	"detected_intent" text,
	"detected_language" text,
	"unanswered" boolean DEFAULT false NOT NULL,
	"human_agent_id" text,
	"audio_offset_ms" integer,
	"audio_duration_ms" integer,
	"tool" jsonb,
	"tokens_in" integer DEFAULT 0 NOT NULL,
	"tokens_out" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "turns_conversation_id_turn_index_pk" PRIMARY KEY("conversation_id","turn_index")
);
--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "message_keys" ADD CONSTRAINT "message_keys_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "turns" ADD CONSTRAINT "turns_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "conversations_account_started_idx" ON "conversations" USING btree ("account_id","started_at","id");--> statement-breakpoint
CREATE INDEX "conversations_account_updated_idx" ON "conversations" USING btree ("account_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "conversations_agent_started_idx" ON "conversations" USING btree ("account_id","agent_id","started_at","id");--> statement-breakpoint
CREATE INDEX "conversations_external_session_idx" ON "conversations" USING btree ("account_id","external_session_id");--> statement-breakpoint
CREATE INDEX "conversations_deleted_idx" ON "conversations" USING btree ("account_id","deleted_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "conversations_session_uq" ON "conversations" USING btree ("account_id","session_id");--> statement-breakpoint
CREATE INDEX "events_undispatched_idx" ON "events" USING btree ("dispatched_at","created_at");--> statement-breakpoint
CREATE INDEX "events_account_idx" ON "events" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "mail_outbox_account_idx" ON "mail_outbox" USING btree ("account_id","created_at");