export async function fetchJSON(url) {
  const res = await fetch(url);
  if (!res.ok) {
    throw new Error(`GET ${url}: ${res.status}`);
  }
  return res.json();
}

export async function listItems(base) {
  const data = fetchJSON(`${base}/items`);
  return data.items;
}
