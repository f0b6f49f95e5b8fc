"""The README's examples as a user runs them: each section's code, in a fresh virtualenv that has
only the package with the extra the README names for it (clients/python/tests/run.sh, step 7).

    python readme_examples.py README.md SECTION DSN

runs the ```python block of the README section whose heading is SECTION, with ``DSN`` bound to
the test server. What the README leaves to the reader is given here, and only that: the
database (its ``DSN = ...`` line names the reader's), and the LangChain section's ``chain``
(any runnable). A section whose example needs a hosted model (the
Agents SDK's Runner, an OpenAI client) is not run here: tests/test_agents_runner.py and
test_adapters.py run the same calls with a scripted model.
"""

import re
import sys
import uuid

readme, section, dsn = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(readme, encoding="utf-8").read()
m = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
assert m, f"no section {section!r} in {readme}"
blocks = re.findall(r"```python\n(.*?)```", m.group(1), re.S)
assert blocks, f"section {section!r} has no python example"
code = "\n".join(blocks)
# The README's own DSN is a placeholder for the reader's: the test server's takes its place.
code = re.sub(r"^DSN = .*$", "", code, flags=re.M)
# Tenants of their own, so that a second run (or another section) starts from nothing.
run = uuid.uuid4().hex[:8]
code = code.replace('"ann"', f'"ann-{run}"')
prelude = f"DSN = {dsn!r}\n"
if section == "LangChain chat history":
    prelude += "from langchain_core.runnables import RunnableLambda\nchain = RunnableLambda(lambda x: x)\n"
exec(compile(prelude + code, f"{readme}#{section}", "exec"), {"__name__": "__main__"})
print(f"README section {section!r}: ran")
