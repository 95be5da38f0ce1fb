#version 330 core
// A screen-aligned quad without vertex buffers: corner i of the rectangle
// u_rect (x0, y0, x1, y1 in normalised device coordinates).
uniform vec4 u_rect;
out vec2 v_uv;  // (0,0) top-left … (1,1) bottom-right of the heatmap

void main() {
  vec2 corner = vec2(float(gl_VertexID & 1), float((gl_VertexID >> 1) & 1));
  v_uv = corner;
  gl_Position = vec4(mix(u_rect.x, u_rect.z, corner.x), mix(u_rect.y, u_rect.w, corner.y), 0.0, 1.0);
}
