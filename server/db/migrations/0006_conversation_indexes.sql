DROP INDEX "conversations_account_started_idx";--> statement-breakpoint
DROP INDEX "conversations_account_updated_idx";--> statement-breakpoint
DROP INDEX "conversations_agent_started_idx";--> statement-breakpoint
DROP INDEX "conversations_external_session_idx";--> statement-breakpoint
DROP INDEX "conversations_deleted_idx";--> statement-breakpoint
CREATE INDEX "conversations_live_started_idx" ON "conversations" USING btree ("account_id","started_at","id") WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX "conversations_live_updated_idx" ON "conversations" USING btree ("account_id","updated_at","id") WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX "conversations_live_agent_started_idx" ON "conversations" USING btree ("account_id","agent_id","started_at","id") WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX "conversations_live_channel_started_idx" ON "conversations" USING btree ("account_id","channel","started_at","id") WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX "conversations_live_status_started_idx" ON "conversations" USING btree ("account_id","status","started_at","id") WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX "conversations_live_outcome_started_idx" ON "conversations" USING btree ("account_id","outcome","started_at","id") WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX "conversations_live_escalated_started_idx" ON "conversations" USING btree ("account_id","started_at","id") WHERE escalated AND deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX "conversations_live_recording_started_idx" ON "conversations" USING btree ("account_id","started_at","id") WHERE has_recording AND deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX "conversations_live_external_session_idx" ON "conversations" USING btree ("account_id","external_session_id","started_at","id") WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX "conversations_live_phone_started_idx" ON "conversations" USING btree ("account_id",(identity->>'phone_e164'),"started_at") WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX "message_keys_created_idx" ON "message_keys" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "conversations_deleted_idx" ON "conversations" USING btree ("account_id","deleted_at","id") WHERE deleted_at IS NOT NULL;