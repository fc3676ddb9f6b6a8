// JSON whose integers stay exact. The REST API sends every integer as a JSON number, as Python
// writes it (so its clients and NNI's read seeds, ids and values exactly); a browser's JSON.parse
// turns one beyond 2^53 into the nearest double (4823208733845494653 would show as
// 4823208733845495000). The page parses with `parseExact` instead: such an integer becomes a
// BigInt (shown digit for digit), and JSON.stringify writes a BigInt back as the same integer.

/** `text` parsed, with integers beyond 2^53 as BigInts (a browser without JSON.parse's source
 * text, before Chrome 114 or Firefox 135, gets plain numbers: rounded, as before). */
export function parseExact(text) {
  return JSON.parse(text, (key, value, context) => {
    if (typeof value !== "number" || Number.isSafeInteger(value) || !context) return value;
    return /^-?\d+$/.test(context.source) ? BigInt(context.source) : value;
  });
}

if (!("toJSON" in BigInt.prototype)) {
  Object.defineProperty(BigInt.prototype, "toJSON", {
    value() {
      return JSON.rawJSON ? JSON.rawJSON(this.toString()) : this.toString();
    },
  });
}
