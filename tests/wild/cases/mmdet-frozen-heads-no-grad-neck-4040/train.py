        for v in self.backbone.parameters():
            v.requires_grad = False
        for v in self.roi_head.parameters():
            v.requires_grad = False
        for v in self.rpn_head.parameters():
            v.requires_grad = False
        for v in self.neck.named_parameters():
            name,para = v
            if 'ATS' not in name:
                para.requires_grad = False
