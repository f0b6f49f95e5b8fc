#!/usr/bin/env python3
"""Writes tests/data/screen_cases.tsv: the labelled set screening is measured on
(crates/memory_core/tests/screen_cases.rs; docs/api.md "Screening").

Each line: the detector that must find something in the text ("none" for a hard negative),
a tab, the text. Positives are built from each format's rules (a card's Luhn digit, an IBAN's
checksum, an SSN's issued ranges, each provider's key prefix and length) with random bodies;
hard negatives are the shapes users write every day that look like them: versions, UUIDs,
commit hashes, dates, order and tracking numbers, ISBNs, addresses, prices, and sentences about
passwords and tokens that hold none. A fixed seed: the file is the same on every run.
"""
import base64
import json
import random
import string
import sys
import uuid

r = random.Random(20261127)
AN = string.ascii_letters + string.digits


def rs(n, alphabet=AN):
    return "".join(r.choice(alphabet) for _ in range(n))


def luhn_complete(prefix, length):
    digits = [int(c) for c in prefix] + [r.randrange(10) for _ in range(length - len(prefix) - 1)]
    for check in range(10):
        d = digits + [check]
        s = 0
        for i, x in enumerate(reversed(d)):
            if i % 2 == 1:
                x *= 2
                x = x - 9 if x > 9 else x
            s += x
        if s % 10 == 0:
            return "".join(map(str, d))


def iban(country, bban):
    s = bban + country + "00"
    n = int("".join(str(int(c, 36)) for c in s))
    check = 98 - n % 97
    return f"{country}{check:02d}{bban}"


def grouped(s, sizes):
    out, i = [], 0
    for k in sizes:
        out.append(s[i:i + k])
        i += k
    return " ".join(out)


pos, neg = [], []
lead = ["", "Here it is: ", "note to self - ", "Use this one: ", "FYI ", "saved it as "]
tail = ["", ".", " (don't share)", " thanks!", " for the staging box."]


def P(det, text):
    pos.append((det, r.choice(lead) + text + r.choice(tail)))


for _ in range(8):
    P("openai_key", "sk-" + rs(48))
for _ in range(6):
    P("openai_key", "sk-proj-" + rs(56, AN + "_-"))
for _ in range(8):
    P("anthropic_key", "sk-ant-api03-" + rs(93, AN + "_-") + "AA")
for _ in range(8):
    P("aws_access_key", "AKIA" + rs(16, string.ascii_uppercase + string.digits))
for _ in range(5):
    P("github_token", "ghp_" + rs(36))
for _ in range(4):
    P("github_token", "github_pat_11" + rs(20, string.ascii_uppercase + string.digits) + "_" + rs(59))
for _ in range(5):
    P("gitlab_token", "glpat-" + rs(20, AN + "_-"))
for _ in range(5):
    P("slack_token", "xoxb-" + rs(12, string.digits) + "-" + rs(13, string.digits) + "-" + rs(24))
for _ in range(5):
    P("stripe_key", r.choice(["sk_live_", "rk_live_", "sk_test_"]) + rs(24))
for _ in range(5):
    P("google_api_key", "AIza" + rs(35, AN + "_-"))
for _ in range(5):
    P("huggingface_token", "hf_" + rs(34))


def b64u(obj):
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


for _ in range(8):
    jwt = b64u({"alg": "HS256", "typ": "JWT"}) + "." + b64u({"sub": rs(8), "iat": r.randrange(10**9, 2 * 10**9)}) + "." + rs(43, AN + "_-")
    P("jwt", "token " + jwt if r.random() < 0.5 else jwt)
for kind in ["RSA ", "EC ", "OPENSSH ", "", "RSA "]:
    body = "\n".join(rs(64, AN + "+/") for _ in range(4))
    P("private_key", f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----")
for _ in range(8):
    P("bearer_token", "Authorization: Bearer " + rs(40, AN + "._-"))
for scheme, host in [("postgres", "db.internal"), ("mysql", "10.0.3.7"), ("https", "git.example.com"),
                     ("redis", "cache.local:6379"), ("amqp", "mq.example.org"), ("mongodb", "cluster0.mongodb.net"),
                     ("ftp", "files.example.net"), ("postgresql", "localhost:5432"), ("smtp", "mail.example.com"),
                     ("https", "registry.example.io")]:
    P("url_password", f"{scheme}://{r.choice(['admin', 'deploy', 'ana', 'svc_app'])}:{rs(12, AN + '!$%')}@{host}/x")
pw_templates = ["my password is {}", "Password: {}", "the wifi password is {}", "pwd={}", "password = {}",
                "The password for the NAS is {}", "passcode: {}", "my passphrase is {}", "PASSWORD={}",
                "the password to the shared drive is {}"]
pw_values = ["hunter2", "Tr0ub4dor&3", "letmein99", "S3cure!Pass", "correcthorsebatterystaple", "qwerty123",
             "P@ssw0rd2024", "blue-elephant-42", "Zx8#kk2!", "sunflower77", "Mango$Tree9", "winter2023!",
             "dragon1987", "ilovemycat", "Lisbon#2019", "x7Gq2pLm", "admin1234", "H0neyB@dger", "pa55word",
             "Oct0ber!!", "7rainSpotting", "kiwiKiwi22", "nebula-9", "Grapes4Dinner", "tango&cash88"]
for i, v in enumerate(pw_values):
    P("password", pw_templates[i % len(pw_templates)].format(v))
kw = ["api_key = {}", "client secret: {}", "access key {}", "token: {}", "SECRET={}", "my api key is {}",
      "auth_key={}", "the token is {}", "private key: {}", "API-KEY: {}", "secret -> {}", "access_key={}",
      "Token {}", "client_secret = \"{}\"", "apikey: {}"]
for t in kw:
    P("keyword_token", t.format(rs(32, AN)))

cards = [("4", 16), ("4", 16), ("4", 16), ("4", 13), ("51", 16), ("52", 16), ("55", 16), ("2221", 16),
         ("2720", 16), ("34", 15), ("37", 15), ("6011", 16), ("65", 16), ("35", 16), ("36", 14), ("62", 16),
         ("4", 16), ("53", 16), ("37", 15), ("4", 19), ("6011", 16), ("54", 16), ("35", 16), ("4", 16), ("51", 16)]
for pre, n in cards:
    c = luhn_complete(pre, n)
    form = r.choice(["plain", "spaced", "dashed"])
    if n == 15:
        c = grouped(c, [4, 6, 5]) if form != "plain" else c
    elif n == 16 and form != "plain":
        c = grouped(c, [4, 4, 4, 4]).replace(" ", "-" if form == "dashed" else " ")
    P("payment_card", "card " + c + " exp 04/29")
bbans = [("DE", "370400440532013000"), ("GB", "NWBK60161331926819"), ("FR", "20041010050500013M02606"),
         ("ES", "21000418450200051332"), ("IT", "X0542811101000000123456"), ("NL", "ABNA0417164300"),
         ("BE", "539007547034"), ("PT", "000201231234567890154"), ("CH", "00762011623852957"), ("AT", "1904300234573201"),
         ("DE", "500105175407324931"), ("GB", "BUKB20201555555555"), ("FR", "30006000011234567890189"),
         ("NL", "RABO0300065264"), ("ES", "91000000001234567890")]
for c, b in bbans:
    x = iban(c, b)
    P("iban", "IBAN " + (grouped(x, [4] * (len(x) // 4 + 1)).strip() if r.random() < 0.5 else x))
for _ in range(15):
    area = r.choice([x for x in range(1, 900) if x != 666])
    P("us_ssn", f"SSN {area:03d}-{r.randrange(1, 100):02d}-{r.randrange(1, 10000):04d}")
for _ in range(5):
    P("uk_nino", "NI number " + r.choice("ACEHJKLMPRSTWXY") + r.choice("ABCEHJKLMPRSTWXY") + f" {r.randrange(10**6):06d} " + r.choice("ABCD"))
for _ in range(5):
    n = r.randrange(10**7, 10**8)
    P("es_dni", f"DNI {n}{'TRWAGMYFPDXBNJZSQVHLCKE'[n % 23]}")
for _ in range(5):
    while True:
        s = luhn_complete(str(r.choice([1, 2, 3, 4, 5, 6, 7, 9])), 9)
        if s:
            break
    P("ca_sin", f"SIN {s[:3]} {s[3:6]} {s[6:]}")
for u in ["ana.silva", "ben+news", "c.okafor", "dev_ops", "emma"]:
    P("email", f"write to {u}@{r.choice(['gmail.com', 'example.org', 'uni-lisboa.pt', 'corp.co.uk'])}")
for ph in ["+1 415 555 2671", "+44 20 7946 0958", "+351 912 345 678", "(212) 555-0187", "+49 30 901820",
          "+33 1 42 68 53 00", "415-555-2671", "+81 3-1234-5678", "+34 612 34 56 78", "(650) 253-0000"]:
    P("phone", "call me on " + ph)

N = lambda text: neg.append(("none", text))
for _ in range(10):
    N(f"We upgraded to v{r.randrange(1, 20)}.{r.randrange(0, 30)}.{r.randrange(0, 50)} yesterday.")
for v in ["1.10.0-rc.1", "Python 3.11.4", "PostgreSQL 15.20", "node 20.11.1", "release 2024.10.2", "build 8.1.2-17",
          "kernel 6.1.0-28-amd64", "iOS 17.4.1", "Chrome 131.0.6778.85", "v0.10.0"]:
    N(f"Running {v} on the laptop.")
for _ in range(20):
    N(f"request id {uuid.UUID(int=r.getrandbits(128), version=4)} failed")
for _ in range(15):
    N(f"fixed in commit {rs(40, '0123456789abcdef')}")
for _ in range(5):
    N(f"see {rs(7, '0123456789abcdef')} and {rs(12, '0123456789abcdef')}")
for d in ["2024-01-15", "15/01/2024", "2019 - 2023", "12.03.2023", "Jan 15, 2024", "2023-12-31 23:59",
          "1999-2004", "01-02-2021", "2020/07/04", "30.11.2026", "the 8th of May 2022", "from 2015-2018",
          "2024-06-07T10:00:00Z", "06/07/2024 at 10:00", "Q3 2025", "week 48 of 2026", "1987-05-17",
          "11/27/2026", "2026.11.27", "20261127"]:
    N(f"That was on {d}.")
for o in ["order #123456789", "Order 4111-2222", "invoice INV-2024-00871", "ticket 17", "PO 4500012345",
          "tracking 1Z999AA10123456784", "case 03192277", "ref 9876543210", "booking ABC123", "order no. 100-2003004-5006007",
          "customer 58214", "RMA 77120045", "shipment 9400111899223344556677", "seat 23C", "gate B42",
          "flight TP1351", "room 1204", "table 12", "bus 728", "claim 2024-11-000123"]:
    N(f"About {o}, please check.")
for i in ["978-3-16-148410-0", "0-306-40615-2", "978-0-596-52068-7", "ISBN 9780140449136", "ISSN 2049-3630"]:
    N(f"The book is {i}.")
for ip in ["192.168.1.10", "10.0.0.254", "172.16.31.7", "8.8.8.8", "fe80::1ff:fe23:4567:890a", "127.0.0.1:5432",
           "0.0.0.0/0", "203.0.113.42", "2001:db8::1", "100.64.0.1"]:
    N(f"The server is at {ip}.")
for m in ["00:1A:2B:3C:4D:5E", "a4:83:e7:12:9f:01", "#ff8800", "#1e90ff", "rgb(12, 34, 56)"]:
    N(f"Set it to {m}.")
for p in ["$1,234,567.89", "€ 2.499,00", "1 250 000 kr", "USD 4,111,111.11", "£12.50", "3,141,592", "12 345 678",
          "1,000,000,000", "99.99%", "4.2 GB"]:
    N(f"It cost {p} in the end.")
for t in ["14:05:23", "3h 20m", "01:02:03.456", "90 minutes", "T+00:45:10"]:
    N(f"Elapsed {t}.")
for c in ["40.7128, -74.0060", "38.7223° N, 9.1393° W", "51.5072,-0.1276", "-33.8688 151.2093", "lat 48.8566 lon 2.3522"]:
    N(f"We met at {c}.")
for _ in range(5):
    N(f"sha256 {rs(64, '0123456789abcdef')}")
for s in ["I reset my password yesterday.", "The password is too short.", "Password is required for that site.",
          "My password manager crashed.", "She forgot her password again.", "The password is on a sticky note somewhere.",
          "Don't tell me your password.", "Password: see the vault entry.", "password is the same as before",
          "Changing the password is a pain.", "the password was wrong", "password reset link expired",
          "Use a long passphrase, not a password.", "Is the password still valid?", "my passcode is hidden"]:
    N(s)
for s in ["I got a token of appreciation.", "token: see vault", "The secret is out: we're moving.",
          "It's no secret that I like jazz.", "Keep the access key in the drawer.", "api key rotation is on Monday",
          "the secret ingredient is cinnamon", "bus token costs 2 euros", "a token gesture", "Secret Santa list is ready"]:
    N(s)
for s in ["I use sk-learn pipelines at work.", "the sk-8 model is fine", "task sk-2024-roadmap is done",
          "ghp is our internal acronym", "AKIA is a word in my notes", "hf_transfer speeds up downloads",
          "xox-abc is a board game", "eyJ is how base64 JSON starts", "glpat is a typo", "AIza is not a name"]:
    N(s)
for s in ["000-12-3456", "666-12-3456", "912-34-5678", "123-00-4567", "123-45-0000"]:
    N(f"Form field shows {s} as the example.")
for s in ["4111 1111 1111 1112", "1234 5678 9012 3456", "4000 1234 5678 9011", "5500 0000 0000 0005", "3782 822463 10006"]:
    N(f"Test number {s} is invalid.")
for s in ["DE89 3704 0044 0532 0130 01", "GB82 WEST 1234 5698 7654 33", "FR76 3000 6000 0112 3456 7890 188",
          "NL91 ABNA 0417 1643 01", "ES91 2100 0418 4502 0005 1333"]:
    N(f"Wrong IBAN {s} bounced.")
for s in ["Call extension 4417.", "My lucky numbers are 7 14 21 28 35.", "Room 3-402-17.", "Score 21-19 21-17.",
          "Dial 112 in an emergency.", "Count: 1 2 3 4 5 6 7 8 9.", "Route 66 - 1926 - 2026.", "Pages 123-145.",
          "Zip 90210-1234.", "Postcode 1000-205 Lisboa."]:
    N(s)

# National ids of other countries (0.13.0), drawn after everything above so that the lines
# before them stay as they were.
def cn_id():
    body = f"{r.randrange(110000, 660000)}{r.randrange(1950, 2010)}{r.randrange(1, 13):02d}{r.randrange(1, 29):02d}{r.randrange(1000):03d}"
    w = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
    return body + "10X98765432"[sum(int(c) * x for c, x in zip(body, w)) % 11]


def cpf():
    d = [r.randrange(10) for _ in range(9)]
    for n in (9, 10):
        d.append(sum(d[i] * (n + 1 - i) for i in range(n)) * 10 % 11 % 10)
    s = "".join(map(str, d))
    return f"{s[:3]}.{s[3:6]}.{s[6:9]}-{s[9:]}"


def nir():
    body = f"{r.choice('12')}{r.randrange(40, 100):02d}{r.randrange(1, 13):02d}{r.randrange(1, 96):02d}{r.randrange(1, 1000):03d}{r.randrange(1, 1000):03d}"
    return grouped(body + f"{97 - int(body) % 97:02d}", [1, 2, 2, 2, 3, 3, 2])


def tax_id():
    while True:
        d = [r.randrange(1, 10)] + [r.randrange(10) for _ in range(9)]
        product = 10
        for x in d:
            s = (x + product) % 10 or 10
            product = s * 2 % 11
        d.append((11 - product) % 10)
        s = "".join(map(str, d))
        return f"{s[:2]} {s[2:5]} {s[5:8]} {s[8:]}"


def my_number():
    d = [r.randrange(10) for _ in range(11)]
    t = sum(d[10 - (n - 1)] * (n + 1 if n <= 6 else n - 5) for n in range(1, 12)) % 11
    s = "".join(map(str, d + [0 if t <= 1 else 11 - t]))
    return f"{s[:4]} {s[4:8]} {s[8:]}"


ODD = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23]


def codice_fiscale():
    U = string.ascii_uppercase
    body = rs(6, U) + f"{r.randrange(100):02d}" + r.choice("ABCDEHLMPRST") + f"{r.randrange(1, 72):02d}" + r.choice(U) + f"{r.randrange(1000):03d}"
    val = lambda c: int(c) if c.isdigit() else ord(c) - 65
    return body + chr(65 + sum(ODD[val(c)] if i % 2 == 0 else val(c) for i, c in enumerate(body)) % 26)


for _ in range(5):
    P("cn_resident_id", r.choice(["身份证号", "ID card ", "我的身份证号码是"]) + cn_id())
for _ in range(5):
    P("br_cpf", r.choice(["Meu CPF é ", "CPF ", "cpf: "]) + cpf())
for _ in range(5):
    P("fr_nir", r.choice(["Numéro de sécurité sociale ", "NIR ", "sécu : "]) + nir())
for _ in range(5):
    P("it_codice_fiscale", r.choice(["Il mio codice fiscale è ", "CF ", "codice fiscale: "]) + codice_fiscale())
for _ in range(5):
    P("de_tax_id", r.choice(["Meine Steuer-ID ist ", "Steueridentifikationsnummer: ", "IdNr. "]) + tax_id())
for _ in range(5):
    P("jp_my_number", r.choice(["マイナンバーは", "個人番号：", "My Number "]) + my_number())
# Their look-alikes: the same digits without the name, or with a wrong check.
for s in ["Bestellnummer 86095742719", "Kundennummer 12 345 678 901", "注文番号123456789018", "会員番号 1234 5678 9012",
          "pedido 529.982.247-26", "NIR 1 85 05 78 006 084 36", "tracking 110105194913310026", "Rechnung 2024 000 123 45"]:
    N(s)

if len(pos) < 200 or len(neg) < 200:
    sys.exit(f"only {len(pos)} positives and {len(neg)} negatives")
out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/screen_cases.tsv"
with open(out, "w") as f:
    f.write("# Screening's labelled set (scripts/screen_cases.py writes it; crates/memory_core/tests/screen_cases.rs reads it).\n")
    f.write("# detector<TAB>text; \"none\" is a hard negative. Newlines in texts are written as \\n.\n")
    for det, text in pos + neg:
        f.write(det + "\t" + text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", " ") + "\n")
print(f"{len(pos)} positives, {len(neg)} hard negatives -> {out}")
