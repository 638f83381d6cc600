DROP TABLE chat_messages;
DROP TABLE job_events;
DROP TABLE jobs;
