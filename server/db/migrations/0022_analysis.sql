CREATE TABLE "conversation_analyses" (
	"conversation_id" text NOT NULL,
	"analysis_version" integer NOT NULL,
	"account_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"values" jsonb NOT NULL,
	"evidence" jsonb NOT NULL,
	"success" boolean,
	"analyzed_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "conversation_analyses_conversation_id_analysis_version_pk" PRIMARY KEY("conversation_id","analysis_version")
);
--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "analysis_version" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "analysis" jsonb;--> statement-breakpoint
ALTER TABLE "conversation_analyses" ADD CONSTRAINT "conversation_analyses_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversation_analyses" ADD CONSTRAINT "conversation_analyses_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversation_analyses" ADD CONSTRAINT "conversation_analyses_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "conversation_analyses_agent_idx" ON "conversation_analyses" USING btree ("agent_id","analysis_version");