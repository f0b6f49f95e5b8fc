// @langchain/langgraph-checkpoint-validation, as published, against MemoryExtSaver: a fresh
// tenant per checkpointer keeps each instance's state apart, as the tool requires.
import { validate } from "@langchain/langgraph-checkpoint-validation";
import { MemoryExtSaver } from "../src/saver.js";
import { newPool, tenant } from "./helpers.js";

const pool = newPool();

validate({
  checkpointerName: "MemoryExtSaver",
  createCheckpointer: () => new MemoryExtSaver(pool, { userId: tenant("validation") }),
  afterAll: async () => {
    await pool.end();
  },
});
