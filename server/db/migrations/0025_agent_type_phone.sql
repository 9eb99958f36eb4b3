-- A call to a number without an agent was recorded with agent_type 'none', which the contract's AgentType
-- does not have: it was a phone call (issue 37's conformance check found it).
UPDATE "conversations" SET "agent_type" = 'phone' WHERE "agent_type" = 'none';
